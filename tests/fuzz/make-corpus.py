#!/usr/bin/env python3
# make-corpus.py: writes the seed corpus of the fuzz targets into
# tests/fuzz/corpus/<target>/seed-*: a few hand-made valid inputs per target,
# encoded in each target's input format (see the decoder in tests/fuzz/<target>.c;
# the two must change together). The seeds give libFuzzer well-formed
# starting points (batches that run, a session that maps and starts its
# queue, every variable set) from which it mutates; the corpus is committed,
# so this script only needs to be run again when a format changes. The
# regression inputs beside the seeds (crash-*) are the fuzzers' own finds
# and are not written here.
#
#   python3 tests/fuzz/make-corpus.py [corpus-dir]

import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(bytes(data))


# ---------------------------------------------------------------------------
# fuzz-npu-batch
# ---------------------------------------------------------------------------

# Op codes (enum htp_op_code) and the decoder's type table indices.
OP = {n: i for i, n in enumerate(
    "INVALID NOP MDEV_GROUP FENCE CPY_FENCE ALLREDUCE CPY ADD SUB MUL DIV ADD_ID SCALE CLAMP SQR SQRT SUM_ROWS "
    "NORM L2_NORM RMS_NORM SOFT_MAX ROPE MUL_MAT MUL_MAT_ID GET_ROWS SET_ROWS UNARY GLU FLASH_ATTN_EXT REPEAT "
    "ARGSORT SSM_CONV GATED_DELTA_NET CUMSUM CONCAT FILL DIAG SOLVE_TRI TRI PAD IM2COL".split())}
TY = {"f32": 0, "f16": 2, "bf16": 4, "q4_0": 5, "q4_1": 6, "q8_0": 7, "q4_K": 8, "q5_K": 9, "q6_K": 10,
      "iq4_nl": 11, "mxfp4": 12, "i8": 13, "i16": 14, "i32": 15, "i64": 16}
BLCK = {"q4_0": 32, "q4_1": 32, "q8_0": 32, "iq4_nl": 32, "mxfp4": 32, "q4_K": 256, "q5_K": 256, "q6_K": 256}
FPARAM = [0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 1e-6, 10000.0, 0.125, -0.5, 3.0, 1e30, -1e30, 8.0, 64.0, 0.0625]


def tensor(typ, ne, buf, off, stride=0, fence_slots=0, weight=False):
    """A fresh-shape tensor (shape mode 0) in buffer buf at byte offset off (snapped by the decoder:
    keep it inside the buffer). stride: 0 contiguous, 3 permuted, 4 padded, 5 tiled, 6 broadcast."""
    if fence_slots:
        return [0, 0x80 | (fence_slots - 1), buf & 15] + list(struct.pack("<H", off))
    b = BLCK.get(typ, 1)
    assert ne[0] % b == 0 and 1 <= ne[0] // b <= 4 or b == 1 and 1 <= ne[0] <= 64
    dims = [(ne[0] // b - 1) if b > 1 else ne[0] - 1, ne[1] - 1, ne[2] - 1, ne[3] - 1]
    fb = (stride << 2) | (0x40 if weight else 0)
    extra = [0] if stride in (3, 4, 6) else []
    return [TY[typ], fb, buf & 15] + dims + extra + list(struct.pack("<H", off))


def op(code, src=(), dst=(), params=()):
    """params: ints (small, kind 0), or floats (kind 1, from the decoder's table)."""
    out = [OP[code], (len(dst) << 4) | len(src)] + list(src) + list(dst) + [len(params)]
    for p in params:
        if isinstance(p, float):
            out += [1, FPARAM.index(p)]
        elif -128 <= p < 128:
            out += [0, p & 0xff]
        else:
            out += [2] + list(struct.pack("<i", p))
    return out


def batch(name, bufs, tensors, ops, threads=1, pool=False, traces=0, prof=0, data=b""):
    h = [len(bufs), len(tensors), len(ops), traces | (prof << 4), (threads - 1) | (0x80 if pool else 0), 0]
    body = h + [p - 1 for p in bufs]
    for t in tensors:
        body += t
    for o in ops:
        body += o
    write("fuzz-npu-batch", name, body + list(data))


def floats(n, scale=0.25):
    return b"".join(struct.pack("<f", ((i * 7) % 23 - 11) * scale) for i in range(n))


batch("nop", [1], [], [op("NOP"), op("NOP"), op("NOP")], traces=4, prof=3)
batch("cpy-f32-f16", [2, 2], [tensor("f32", [16, 4, 1, 1], 0, 0), tensor("f16", [16, 4, 1, 1], 1, 0)],
      [op("CPY", [0], [1])], data=floats(64))
batch("cpy-permuted", [2, 2], [tensor("f32", [8, 6, 2, 1], 0, 0, stride=3), tensor("f32", [6, 8, 2, 1], 1, 0)],
      [op("CPY", [0], [1])], threads=3, pool=True, data=floats(96))
batch("add-mul", [2], [tensor("f32", [32, 4, 1, 1], 0, 0), tensor("f32", [32, 1, 1, 1], 0, 1024),
                       tensor("f32", [32, 4, 1, 1], 0, 2048)],
      [op("ADD", [0, 1], [2]), op("MUL", [2, 1], [2])], data=floats(512))
batch("rms-norm", [2], [tensor("f32", [64, 4, 1, 1], 0, 0), tensor("f32", [64, 4, 1, 1], 0, 1024)],
      [op("RMS_NORM", [0], [1], [1e-6]), op("SCALE", [1], [1], [0.5, 0.0])], data=floats(256))
batch("softmax", [1], [tensor("f32", [16, 4, 1, 1], 0, 0), tensor("f32", [16, 4, 1, 1], 0, 512)],
      [op("SOFT_MAX", [0], [1], [1.0, 0.0])], data=floats(64))
batch("mul-mat-q8", [2, 1, 1], [tensor("q8_0", [64, 8, 1, 1], 0, 0), tensor("f32", [64, 4, 1, 1], 1, 0),
                                tensor("f32", [8, 4, 1, 1], 2, 0)],
      [op("MUL_MAT", [0, 1], [2])], threads=2, data=bytes(range(256)) * 3)
batch("mul-mat-q4-tiled", [4, 1, 1], [tensor("q4_0", [64, 16, 1, 1], 0, 0, stride=5, weight=True),
                                      tensor("f32", [64, 3, 1, 1], 1, 0), tensor("f32", [16, 3, 1, 1], 2, 0)],
      [op("MUL_MAT", [0, 1], [2])], data=bytes((i * 37) & 0xff for i in range(4096)))
batch("get-rows", [1, 1], [tensor("f32", [16, 8, 1, 1], 0, 0), tensor("i32", [3, 1, 1, 1], 0, 1024),
                           tensor("f32", [16, 3, 1, 1], 1, 0)],
      [op("GET_ROWS", [0, 1], [2])], data=floats(128) + bytes(512) + struct.pack("<3i", 5, 0, 7))
batch("unary-glu", [1], [tensor("f32", [32, 2, 1, 1], 0, 0), tensor("f32", [32, 2, 1, 1], 0, 512),
                         tensor("f32", [16, 2, 1, 1], 0, 1024)],
      [op("UNARY", [0], [1], [10]), op("GLU", [0], [2], [2, 0])], data=floats(64))
batch("fences", [1, 1], [tensor("i8", [64, 1, 1, 1], 0, 0, fence_slots=2), tensor("f32", [8, 1, 1, 1], 0, 256),
                         tensor("f32", [8, 1, 1, 1], 1, 0)],
      [op("FENCE", [0], [], [5, 1]), op("FENCE", [0], [], [5, 0]), op("CPY_FENCE", [1, 0], [2], [6])],
      traces=8, prof=3)
batch("group", [1], [tensor("i8", [64, 1, 1, 1], 0, 0, fence_slots=1), tensor("f32", [16, 4, 1, 1], 0, 256),
                     tensor("f32", [16, 4, 1, 1], 0, 1024)],
      [op("MDEV_GROUP", [0], [], [0]), op("ADD", [1, 1], [2]), op("SQR", [2], [2])], data=bytes(256) + floats(64))


# ---------------------------------------------------------------------------
# fuzz-host-rsp
# ---------------------------------------------------------------------------

def rsp_session(name, depth_log2, threads, traces, batch_ops, actions):
    write("fuzz-host-rsp", name, [depth_log2 | ((threads - 1) << 2), traces | ((batch_ops - 1) << 4)] + actions)


def prof_pattern():
    # The head of a struct htp_prof_desc (usecs, cycles, opcode, status, n_threads, pmu_mask; the
    # eight PMU counts follow in the struct): the slot is tiled with it.
    p = list(struct.pack("<QQIIII", 12, 3400, OP["MUL_MAT"], 0, 2, 0))
    return [len(p)] + p


def answer(n_ops, n_done, traces=0, status=0, seq_mode=0):
    return [2, seq_mode, status, 0, 0, n_ops, n_done, traces] + list(struct.pack("<QQ", 40, 9000)) + prof_pattern()


PUSH, POP = [0, 1, 4, 2], [3]
rsp_session("one-batch", 0, 1, 0, 4, PUSH + answer(2, 2) + POP)
rsp_session("three-in-flight", 2, 4, 4, 8,
            PUSH * 3 + answer(2, 2, 4) + POP + answer(2, 1, 4, status=2) + answer(2, 2, 4) + POP + POP)
rsp_session("stale-and-raw", 1, 2, 2, 4, PUSH + [1, 3, 5, 40, 2, 8] + list(range(8)) + answer(2, 2, seq_mode=1) +
            POP + answer(9, 9, 9) + POP + [4, 7, 0, 0, 0] + PUSH)

HW = struct.pack("<IIIIQQII24s", 79, 4, 4, 1, 8 << 20, 3355443200, 4096, 0, b"htp-npu")
HELLO = struct.pack("<IIII", 1, 0, 3, 0) + HW + bytes(88 - 16 - len(HW))
VMEM = struct.pack("<II", 9, 0) + struct.pack("<QQQIIII", 1 << 30, 1 << 20, (1 << 30) - (1 << 20), 0, 1, 0, 0)
VMEM += bytes(88 - len(VMEM))
rsp_session("hello", 0, 1, 0, 1, [5, 0x80 | 1, 0] + list(HELLO) + [5, 9, 0] + list(VMEM) + [5, 2, 41] + list(VMEM[:40]))


# ---------------------------------------------------------------------------
# fuzz-config
# ---------------------------------------------------------------------------

VARS = ("DEVICES NDEV ARCH VERBOSE DMA64 VMEM NHVX NHMX VTCM_SIZE POWER_MODE MBUF HOSTBUF OPBATCH OPQUEUE OPPOLL "
        "OPFUSION RT_REPACK OPFILTER MM_SELECT FA_SELECT FA_SPLIT GDN_SELECT AR_SELECT AR_SCATTER PROFILE OPTRACE ETM "
        "NPU NPU_EXEC FENCE_TIMEOUT_MS").split()


def env(name, records):
    out = []
    for var, value in records:
        v = value.encode()
        out += [VARS.index(var), len(v)] + list(v)
    write("fuzz-config", name, out)


env("typical", [("DEVICES", "HTP0,HTP1:2,G[0-1]:1"), ("ARCH", "v81"), ("VMEM", "2g"), ("MBUF", "512m,1g,3g"),
                ("PROFILE", "3"), ("OPTRACE", "100"), ("OPFILTER", "MUL_MAT.*|ADD"), ("POWER_MODE", "balanced"),
                ("NPU", "/usr/bin/htp-npu"), ("NPU_EXEC", "qemu-hexagon -cpu v67")])
env("counts", [("DEVICES", "4"), ("NDEV", "2"), ("NHVX", "3"), ("VTCM_SIZE", "8M"), ("OPBATCH", "256"),
               ("OPQUEUE", "16"), ("FENCE_TIMEOUT_MS", "100"), ("VERBOSE", "1"), ("RT_REPACK", "2")])
env("pmu", [("PROFILE", "1,2,3,4,5,6,7,0x8c"), ("ARCH", "73"), ("DMA64", "0"), ("MM_SELECT", "1"),
            ("AR_SELECT", "0"), ("FA_SPLIT", "0"), ("HOSTBUF", "1"), ("OPPOLL", "1"), ("ETM", "1")])
env("malformed", [("DEVICES", "HTP0,,HTP99,X[3-1]:,HTP0"), ("ARCH", "v12x"), ("VMEM", "-1"), ("MBUF", ",,,"),
                  ("PROFILE", "9"), ("OPFILTER", "(["), ("OPBATCH", "0x"), ("NHVX", "1000"), ("POWER_MODE", "max")])
write("fuzz-config", "long-values", [VARS.index("NPU_EXEC"), 255, 70] + list(b"qemu -x ") +
      [VARS.index("DEVICES"), 255, 3] + list(b"HTP0,HTP") + [VARS.index("NPU"), 255, 64] + list(b"/a/b/c/d"))


# ---------------------------------------------------------------------------
# fuzz-ctl
# ---------------------------------------------------------------------------

CTL = {"HELLO": 1, "OPEN": 2, "CLOSE": 3, "MAP": 4, "UNMAP": 5, "QSTART": 6, "QSTOP": 7, "PROFILER": 8, "VMEM": 9}
MEMFD = 0x10  # one memfd beside the message


def msg(kind, *fields, fd=0):
    return [CTL[kind] | fd, 0] + list(fields)


def conversation(name, msgs):
    out = []
    for m in msgs:
        out += m
    write("fuzz-ctl", name, out)


# fields after the type: [how, session] then the type's own; memfd bytes come first.
OPEN = msg("OPEN", 0, 0, 0, 2)            # vtcm/vmem defaults, virt 0, 2 threads
OPEN_SMALL = msg("OPEN", 0x24, 0, 1, 1)   # vtcm 4 KiB, vmem 1 MiB
MAP_PINNED = msg("MAP", 3, 0x08, 0, 0, 0, fd=MEMFD)  # 4 pages, key 100, flags PINNED
QSTART = msg("QSTART", 0x01, 0, 0)          # depth 2, the canonical layout in key 100
conversation("session", [msg("HELLO", 0, 0), OPEN, MAP_PINNED, QSTART, msg("PROFILER", 2, 0), msg("VMEM", 0, 0),
                         msg("QSTOP", 0, 0), msg("UNMAP", 0, 0, 0), msg("CLOSE", 0, 0)])
# The pinned buffer holds one request (slot 0, no buffers, 2 ops) for the queue reader to run.
conversation("queue-runs", [OPEN, msg("MAP", 0x43, 0, 0, 2, 0x08, 0, 0, 0, fd=MEMFD), QSTART, msg("VMEM", 0, 0)])
conversation("malformed", [[CTL["HELLO"] | 0x80, 10, 0, 0], [CTL["MAP"] | 0x20, 0, 1, 2, 0, 0, 0, 0, 0],
                           [CTL["VMEM"] | 0x30, 0, 0, 0], [0x40, 0, 0x80, 0] + [0xee] * 56 + [7, 0, 0, 0], OPEN_SMALL,
                           msg("MAP", 0x81, 0x48, 0, 0, 0, 0, 0, fd=MEMFD), msg("QSTART", 0x14, 0, 0, 1, 0, 0, 0, 1)])
