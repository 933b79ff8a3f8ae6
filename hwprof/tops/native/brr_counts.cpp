// Full-period outcome counts of the brr unit (tests/verilator_period.py): for every
// state of one LFSR period, reads `taken` at freq 0..15 (combinational), then clocks
// one brr; prints JSON with the taken count per freq and, for lags 1..8, the states
// where brr t and t + lag (cyclically) are both taken. Nothing of the golden model
// enters: the counts come from the Verilog alone.
//
// usage: brr_counts PERIOD
#include "harness.h"
#include "Vbrr.h"

int main(int argc, char** argv) {
    using namespace hwprof;
    usage_if(argc != 2, argv[0], "PERIOD");
    const uint64_t period = parse_u64(argv[1]);
    const int lags = 8;
    VerilatedContext ctx;
    Vbrr* top = new Vbrr{&ctx};
    top->decode_valid = 0; top->load_valid = 0; top->freq = 0;
    reset(top);
    top->eval();
    std::vector<uint16_t> taken(period);
    uint64_t first_state = top->state;
    for (uint64_t t = 0; t < period; ++t) {
        uint16_t bits = 0;
        for (int f = 0; f < 16; ++f) {
            top->freq = f; top->eval();
            bits |= (uint16_t)(top->taken & 1) << f;
        }
        taken[t] = bits;
        top->decode_valid = 1; top->eval();
        rising_edge(top);
        top->decode_valid = 0; top->eval();
    }
    std::printf("{\"back_to_start\": %d, \"taken\": [", (uint64_t)top->state == first_state);
    for (int f = 0; f < 16; ++f) {
        uint64_t n = 0;
        for (uint64_t t = 0; t < period; ++t) n += (taken[t] >> f) & 1;
        std::printf("%s%llu", f ? ", " : "", (unsigned long long)n);
    }
    std::printf("], \"both\": [");
    for (int lag = 1; lag <= lags; ++lag) {
        uint64_t n[16] = {0};
        for (uint64_t t = 0; t < period; ++t) {
            uint16_t both = taken[t] & taken[(t + lag) % period];
            for (int f = 0; f < 16; ++f) n[f] += (both >> f) & 1;
        }
        std::printf("%s[", lag > 1 ? ", " : "");
        for (int f = 0; f < 16; ++f) std::printf("%s%llu", f ? ", " : "", (unsigned long long)n[f]);
        std::printf("]");
    }
    std::printf("]}\n");
    delete top;
    return 0;
}
