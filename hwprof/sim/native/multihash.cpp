// Native Verilator harness for the multi-hash profiler: streams 64-bit keys from a
// file (tuples___05Fvalid while keys remain, the next key only once accepted),
// records___05Fready = 1, and writes every record as its three payload words (the
// Python side splits key, count and the end marker). Drains DRAIN cycles at the end.
//
// usage: multihash KEYS.bin OUT.bin DRAIN
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "Vmultihash.h"
#include "verilated.h"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s KEYS.bin OUT.bin DRAIN\n", argv[0]);
        return 2;
    }
    std::FILE* in = std::fopen(argv[1], "rb");
    if (!in) { std::perror(argv[1]); return 1; }
    std::vector<uint64_t> keys;
    uint64_t buf[4096];
    size_t n;
    while ((n = std::fread(buf, 8, 4096, in)) > 0) keys.insert(keys.end(), buf, buf + n);
    std::fclose(in);
    const uint64_t drain = std::strtoull(argv[3], nullptr, 0);
    VerilatedContext ctx;
    Vmultihash* top = new Vmultihash{&ctx};
    top->clk = 0;
    top->rst = 1;
    top->tuples___05Fvalid = 0;
    top->records___05Fready = 1;
    top->cfg_we = 0;
    top->eval();
    top->clk = 1; top->eval(); top->clk = 0; top->eval();
    top->rst = 0;
    std::vector<uint32_t> out;
    uint64_t i = 0, cycles = 0, stalls = 0, idle = 0;
    auto start = std::chrono::steady_clock::now();
    while (i < keys.size() || idle < drain) {
        const bool offer = i < keys.size();
        top->tuples___05Fvalid = offer;
        top->tuples___05Fpayload = offer ? keys[i] : 0;
        top->eval();
        if (top->records___05Fvalid) {
            const auto& p = top->records___05Fpayload;
            out.push_back(p[0]);
            out.push_back(p[1]);
            out.push_back(p[2]);
        }
        if (offer) {
            if (top->tuples___05Fready) ++i; else ++stalls;
        } else {
            ++idle;
        }
        ++cycles;
        top->clk = 1; top->eval(); top->clk = 0; top->eval();
    }
    auto stop = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(stop - start).count();
    std::FILE* o = std::fopen(argv[2], "wb");
    if (!o) { std::perror(argv[2]); return 1; }
    std::fwrite(out.data(), 4, out.size(), o);
    std::fclose(o);
    std::printf("%llu cycles %llu stalls %.6f s %.0f cycles/s\n", (unsigned long long)cycles,
                (unsigned long long)stalls, seconds, cycles / seconds);
    top->final();
    delete top;
    return 0;
}
