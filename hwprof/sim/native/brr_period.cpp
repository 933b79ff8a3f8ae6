// Native Verilator harness for the brr unit: decode_valid every cycle for N cycles
// from reset, freq from a seeded xorshift generator; writes per cycle the freq,
// taken, redirect and state (binary, little endian) for the Python side to check
// against the golden model, and prints the simulated cycles per second.
//
// usage: brr_period CYCLES SEED OUT.bin
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "Vbrr.h"
#include "verilated.h"

static inline void tick(Vbrr* top) {
    top->clk = 1;
    top->eval();
    top->clk = 0;
    top->eval();
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s CYCLES SEED OUT.bin\n", argv[0]);
        return 2;
    }
    const uint64_t cycles = std::strtoull(argv[1], nullptr, 0);
    uint64_t x = std::strtoull(argv[2], nullptr, 0) | 1;
    VerilatedContext ctx;
    Vbrr* top = new Vbrr{&ctx};
    top->clk = 0;
    top->rst = 1;
    top->decode_valid = 0;
    top->load_valid = 0;
    top->load_data = 0;
    top->freq = 0;
    top->eval();
    tick(top);
    top->rst = 0;
    top->eval();
    // record: freq (u8), taken | redirect << 1 (u8), state (u32)
    std::vector<uint8_t> flags(cycles), freqs(cycles);
    std::vector<uint32_t> states(cycles);
    auto start = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < cycles; ++i) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        const uint8_t f = x & 15;
        top->decode_valid = 1;
        top->freq = f;
        top->eval();
        freqs[i] = f;
        flags[i] = top->taken | (top->redirect << 1);
        states[i] = top->state;
        tick(top);
    }
    auto stop = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(stop - start).count();
    std::FILE* out = std::fopen(argv[3], "wb");
    if (!out) { std::perror(argv[3]); return 1; }
    std::fwrite(freqs.data(), 1, cycles, out);
    std::fwrite(flags.data(), 1, cycles, out);
    std::fwrite(states.data(), 4, cycles, out);
    std::fclose(out);
    std::printf("%llu cycles %.6f s %.0f cycles/s\n", (unsigned long long)cycles, seconds,
                cycles / seconds);
    top->final();
    delete top;
    return 0;
}
