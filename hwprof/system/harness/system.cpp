// Native Verilator harness of the hwprof system (hwprof/system/sim.py builds and runs it).
//
// usage: system PROGRAM.bin MAX_CYCLES SEED EVENTS_OUT SUMMARY_OUT [LOADS_OUT [PROF_HALF]]
//
// Resets the system, holds the core in reset while it writes the program image into
// RAM (boot port) and SEED into the brr unit's LFSR, then runs until the program
// writes the exit register, the core traps, an unmapped address is accessed, or
// MAX_CYCLES pass. Console bytes go to stdout. EVENTS_OUT ("-" for none) receives
// one record of four little-endian uint32 per event:
//   word 0: kind (1 = brr retired, 2 = LFSR load) | freq << 8 | taken << 12
//   word 1: pc of the brr (0 for a load)
//   word 2: LFSR state the brr read, or the loaded value
//   word 3: cycle (from the end of the hold)
// SUMMARY_OUT receives one JSON object.
//
// Built with the multi-hash profiler (-DHWPROF_PROFILER): LOADS_OUT ("-" for none)
// receives one record of four little-endian uint32 per tuple offered to the profiler
// (a retired load while it runs), in order: pc, value, data address,
// bytes loaded | dropped << 8 (the FIFO was full). With the profiler's own clock
// (-DHWPROF_PROF_CLOCK): PROF_HALF is its half period in time units where the core's
// half period is 60 (60: the same clock; 80: 0.75 of its frequency; 120: half).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "Vhwprof_system.h"
#include "verilated.h"

static void die(const char* what, const char* detail) {
    std::fprintf(stderr, "%s: %s\n", what, detail);
    std::exit(2);
}

#ifdef HWPROF_PROF_CLOCK
// Two clocks: toggle each at its own half period, the core's 60 time units.
static const uint64_t CORE_HALF = 60;
static uint64_t prof_half = CORE_HALF, next_core = CORE_HALF, next_prof = CORE_HALF;

static void toggle_core(Vhwprof_system* top) {
    for (;;) {
        const uint64_t t = next_core < next_prof ? next_core : next_prof;
        if (next_prof == t) {
            top->prof_clk = !top->prof_clk;
            next_prof += prof_half;
        }
        const bool core = next_core == t;
        if (core) {
            top->clk = !top->clk;
            next_core += CORE_HALF;
        }
        top->eval();
        if (core) return;
    }
}

static void tick(Vhwprof_system* top) {
    toggle_core(top);
    toggle_core(top);
}
#else
static void tick(Vhwprof_system* top) {
    top->clk = 1;
    top->eval();
    top->clk = 0;
    top->eval();
}
#endif

int main(int argc, char** argv) {
    if (argc < 6 || argc > 8)
        die("usage", "system PROGRAM.bin MAX_CYCLES SEED EVENTS_OUT SUMMARY_OUT "
                     "[LOADS_OUT [PROF_HALF]]");
    FILE* loads = nullptr;
    if (argc > 6 && std::string(argv[6]) != "-") {
#ifndef HWPROF_PROFILER
        die("LOADS_OUT", "this model has no profiler");
#endif
        loads = std::fopen(argv[6], "wb");
        if (!loads) die("cannot write", argv[6]);
    }
    if (argc > 7) {
#ifdef HWPROF_PROF_CLOCK
        prof_half = std::strtoull(argv[7], nullptr, 0);
        if (prof_half < 1) die("PROF_HALF", "must be positive");
        next_prof = prof_half;
#else
        die("PROF_HALF", "this model has no profiler clock of its own");
#endif
    }
    const char* image_path = argv[1];
    const uint64_t max_cycles = std::strtoull(argv[2], nullptr, 0);
    const uint32_t seed = (uint32_t)std::strtoul(argv[3], nullptr, 0);
    FILE* events = nullptr;
    if (std::string(argv[4]) != "-") {
        events = std::fopen(argv[4], "wb");
        if (!events) die("cannot write", argv[4]);
    }
    std::vector<uint32_t> words;
    {
        FILE* f = std::fopen(image_path, "rb");
        if (!f) die("cannot read", image_path);
        uint8_t buf[4];
        size_t n;
        while ((n = std::fread(buf, 1, 4, f)) > 0) {
            for (size_t i = n; i < 4; i++) buf[i] = 0;
            words.push_back(buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24);
        }
        std::fclose(f);
    }
    Verilated::commandArgs(argc, argv);
    auto* top = new Vhwprof_system;
    top->clk = 0;
    top->rst = 1;
    top->hold = 1;
    top->eval();
    tick(top);
#ifdef HWPROF_PROF_CLOCK
    for (int i = 0; i < 4; i++) tick(top);  // a slower profiler clock sees the reset too
#endif
    top->rst = 0;
    for (size_t i = 0; i < words.size(); i++) {
        top->boot_valid = 1;
        top->boot_addr = (uint32_t)i;
        top->boot_data = words[i];
        tick(top);
    }
    top->boot_valid = 0;
    uint32_t rec[4];
    auto log = [&](uint32_t kind, uint32_t pc, uint32_t value, uint64_t cycle) {
        if (!events) return;
        rec[0] = kind;
        rec[1] = pc;
        rec[2] = value;
        rec[3] = (uint32_t)cycle;
        std::fwrite(rec, 4, 4, events);
    };
    top->lfsr_load_valid = 1;
    top->lfsr_load_data = seed;
    top->eval();
    log(2, 0, top->obs_lfsr_load_data, 0);
    tick(top);
    top->lfsr_load_valid = 0;
    top->hold = 0;
    top->eval();

    const char* status = "timeout";
    uint32_t exit_code = 0;
    uint64_t cycle = 0, brr_retired = 0, brr_taken = 0, offered = 0, dropped = 0;
    std::string out;
    const auto wall0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    while (cycle < max_cycles) {
        // outputs of this cycle (before the edge)
        if (top->obs_brr_valid) {
            brr_retired++;
            brr_taken += top->obs_brr_taken;
            log(1 | top->obs_brr_freq << 8 | top->obs_brr_taken << 12, top->obs_pc,
                top->obs_lfsr_state, cycle);
        }
        if (top->obs_lfsr_load) log(2, 0, top->obs_lfsr_load_data, cycle);
#ifdef HWPROF_PROFILER
        if (top->obs_load_valid) {
            offered++;
            dropped += top->obs_load_dropped;
            if (loads) {
                const uint32_t t[4] = {top->obs_load_pc, top->obs_load_value,
                                       top->obs_load_addr,
                                       (uint32_t)top->obs_load_size |
                                           (uint32_t)top->obs_load_dropped << 8};
                std::fwrite(t, 4, 4, loads);
            }
        }
#endif
        if (top->console_valid) std::fputc(top->console_data, stdout);
        const bool exiting = top->exit_valid;
        exit_code = top->exit_code;
        tick(top);
        cycle++;
        if (exiting) {
            status = "exit";
            break;
        }
        if (top->trap) {
            status = "trap";
            break;
        }
        if (top->bus_error) {
            status = "bus_error";
            break;
        }
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::fflush(stdout);
    if (events) std::fclose(events);
    if (loads) std::fclose(loads);
    FILE* s = std::fopen(argv[5], "w");
    if (!s) die("cannot write", argv[5]);
    std::fprintf(s,
                 "{\"status\": \"%s\", \"exit_code\": %d, \"cycles\": %llu, \"instret\": %llu, "
                 "\"brr_retired\": %llu, \"brr_taken\": %llu, \"pc\": %u, \"insn\": %u, "
                 "\"bus_error_addr\": %u, \"lfsr_state\": %u, \"wall_seconds\": %.6f, "
                 "\"cpu_seconds\": %.6f, \"offered\": %llu, \"dropped\": %llu}\n",
                 status, (int32_t)exit_code, (unsigned long long)cycle,
                 (unsigned long long)top->obs_instret, (unsigned long long)brr_retired,
                 (unsigned long long)brr_taken, top->obs_pc, top->obs_insn, top->bus_error_addr,
                 top->obs_lfsr_state, wall, cpu, (unsigned long long)offered,
                 (unsigned long long)dropped);
    std::fclose(s);
    top->final();
    delete top;
    return 0;
}
