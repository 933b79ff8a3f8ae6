"""Catalog entries of selective instruction dispatch (Vaswani, Srikant & Thazhuthaveetil)."""

from ..block import Param, Property, Top, golden_params
from ..golden.dispatch import DispatchConfig, golden_filter_params
from ..golden.isa_profile import CTI_OPS, CUSTOM1, CUSTOM2, PCI_MASK, PI_OPS
from ..golden.predictor import PredictorConfig
from ..rtl.dispatch_filter import DispatchFilter
from ..rtl.profile_flag_predictor import ProfileFlagPredictor


def _filter_budget(params):
    config = DispatchConfig(**golden_filter_params(params))
    return {
        "flops": config.ckpt_width + 1,
        "source": "Vaswani et al., sec. III-B, V: n profile flags (the paper gives no gate "
                  "count; hwprof adds the flag stack, its pointer and the bit that halts "
                  "decode behind a flag-stack exception)",
    }


def _predictor_budget(params):
    return {
        "memory_bits": 8 * 1024,
        "source": "Vaswani et al., sec. VII-C: 2-way x 64-set block descriptor table, "
                  "about 1 KB",
    }


def props_dispatch_filter(p: dict) -> list[Property]:
    cfg = DispatchConfig(lanes=p["lanes"], n_flags=p["n_flags"], stack_depth=p["stack_depth"],
                         addr_width=p["addr_width"])  # fmt: skip
    n, depth, cw = cfg.n_flags, cfg.stack_depth, cfg.ckpt_width
    decode, dispatch, sp = [], [], []
    for i in range(cfg.lanes):
        w = f"insn[{32 * i + 31}:{32 * i}]"
        flags_in = "flags" if i == 0 else f"ckpt[{cw * (i - 1) + n - 1}:{cw * (i - 1)}]"
        decode.append(
            f"wire [31:0] f_w{i} = {w};\n"
            f"wire f_pi{i} = f_w{i}[6:0] == 7'd{CUSTOM2} && "
            f"!(f_w{i}[14:12] == 3'd0 && f_w{i}[28:25] != 4'd0);\n"
            f"wire f_pci{i} = (f_w{i} & 32'h{PCI_MASK:08x}) == 32'h{CUSTOM1:08x};\n"
            f"wire [2:0] f_k{i} = f_w{i}[31:29];\n"
            f"wire [7:0] f_fl{i} = {flags_in};\n"
            f"wire f_on{i} = f_k{i} < {n} && f_fl{i}[f_k{i}];\n"
        )  # fmt: skip
        if p.get("predecoded"):
            # the integrator's constraint: the fetch queue's bits are the word's predecode
            cti = " || ".join(f"f_w{i}[14:12] == 3'd{PI_OPS.index(op)}" for op in CTI_OPS)
            decode.append(
                f"wire f_cti{i} = f_pi{i} && ({cti});\n"
                f"always @* assume (insn_pre[{3 * i + 2}:{3 * i}] == "
                f"{{f_cti{i}, f_pi{i}, f_pci{i}}});\n"
            )  # fmt: skip
        dispatch.append(
            f"always @* begin\n"
            f"  assert (!dispatch[{i}] || take[{i}]); assert (!drop[{i}] || take[{i}]);\n"
            f"  if (take[{i}] && f_pi{i}) assert (dispatch[{i}] == f_on{i});\n"
            f"  if (take[{i}] && f_pi{i}) assert (drop[{i}] == !f_on{i});\n"
            f"  if (take[{i}] && !f_pi{i} && !f_pci{i}) assert (dispatch[{i}]);\n"
            f"  if (f_pci{i}) assert (!drop[{i}] && "
            f"dispatch[{i}] == (overflow[{i}] || underflow[{i}]));\n"
            f"end"
        )  # fmt: skip
        sp.append(f"always @* assert (ckpt[{cw * i + cw - 1}:{cw * i + n + depth}] <= {depth});")
    return [
        Property("pi_dispatch_by_flag",
                 "a taken PI is dispatched iff its flag (as left by the older lanes) is set, "
                 "else dropped; every taken non-PI, non-PCI instruction is dispatched; "
                 "a PCI only to carry its flag-stack overflow/underflow exception to commit",
                 {"dispatch_filter": "".join(decode) + "\n".join(dispatch)}),
        Property("flag_sp_in_range",
                 f"the flag stack pointer stays in 0..{depth} (register and every checkpoint)",
                 {"dispatch_filter": f"always @* assert (sp <= {depth});\n" + "\n".join(sp)}),
    ]



TOPS = [
    Top(
        name="dispatch_filter",
        properties=props_dispatch_filter,
        description="decode-stage selective dispatch: profile flags, flag stack, PI filter, "
                    "mis-fetch redirect, checkpoints (Vaswani et al.)",
        build=DispatchFilter,
        params=(
            Param("lanes", 4, "int", "decode lanes W, 1..4"),
            *golden_params(DispatchConfig,
                           n_flags="profile flags (profile types), 1..8",
                           stack_depth="flag stack entries, 1..64",
                           addr_width="instruction address width, 8..64"),
            Param("predecoded", True, "bool", "the fetch queue supplies each word's "
                                              "is_pci/is_pi/is_cti bits (insn_pre; timing, "
                                              "docs/fpga.md); false: the filter decodes"),
        ),
        budget=_filter_budget,
        variants=({}, {"lanes": 1}, {"lanes": 2, "n_flags": 8}, {"predecoded": False}),
        cocotb_module="test_dispatch_filter",
    ),
    Top(
        name="profile_flag_predictor",
        description="fetch-stage profile-flag predictor: block descriptor table, prediction "
                    "bits, leader register (Vaswani et al.)",
        build=ProfileFlagPredictor,
        params=(
            Param("lanes", 4, "int", "fetch/decode lanes, 1..4"),
            *golden_params(PredictorConfig,
                           n_flags="profile flags (prediction bits), 1..8",
                           sets="table sets, power of two",
                           ways="table ways, 1..2 (LRU)",
                           min_block="smallest block skipped, instructions",
                           addr_width="instruction address width, 8..64",
                           length_check="sec. IV-A.2 block-length check (pflen)"),
            Param("update_latency", 3, "int", "cycles from decode to the table write, 0..3 "
                                              "(1..3: pipelined, docs/fpga.md)"),
            Param.golden(PredictorConfig, "fetch_latency",
                         "cycles from fetch to skip/follow/not_taken, 0..1 (1: registered "
                         "outputs)"),
        ),
        budget=_predictor_budget,
        variants=({}, {"lanes": 1}, {"ways": 1, "sets": 128}, {"length_check": True}),
        cocotb_module="test_profile_flag_predictor",
    ),
]
