// Native Verilator harness for the brr unit: decode_valid every cycle for N cycles
// from reset, freq from a seeded xorshift generator; writes per cycle the freq,
// taken, redirect and state (binary, little endian) for the Python side to check
// against the golden model, and prints the timing line (harness.h).
//
// usage: brr_period CYCLES SEED OUT.bin
#include "harness.h"
#include "Vbrr.h"

int main(int argc, char** argv) {
    using namespace hwprof;
    usage_if(argc != 4, argv[0], "CYCLES SEED OUT.bin");
    const uint64_t cycles = parse_u64(argv[1]);
    uint64_t x = parse_u64(argv[2]) | 1;
    VerilatedContext ctx;
    Vbrr* top = new Vbrr{&ctx};
    top->decode_valid = 0;
    top->load_valid = 0;
    top->load_data = 0;
    top->freq = 0;
    reset(top);
    // record: freq (u8), taken | redirect << 1 (u8), state (u32)
    std::vector<uint8_t> flags(cycles), freqs(cycles);
    std::vector<uint32_t> states(cycles);
    Timer timer;
    for (uint64_t i = 0; i < cycles; ++i) {
        const uint8_t f = xorshift(x) & 15;
        top->decode_valid = 1;
        top->freq = f;
        top->eval();
        freqs[i] = f;
        flags[i] = top->taken | (top->redirect << 1);
        states[i] = top->state;
        rising_edge(top);
    }
    timer.stop();
    std::FILE* out = std::fopen(argv[3], "wb");
    if (!out) die(argv[3], std::strerror(errno));
    std::fwrite(freqs.data(), 1, cycles, out);
    std::fwrite(flags.data(), 1, cycles, out);
    std::fwrite(states.data(), 4, cycles, out);
    if (std::fclose(out) != 0) die(argv[3], std::strerror(errno));
    report(cycles, timer);
    top->final();
    delete top;
    return 0;
}
