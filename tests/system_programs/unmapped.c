/* Reads an address no subordinate decodes. */
#include "hwprof.h"

int main(void) { return (int)HWPROF_REG(0x40000000u); }
