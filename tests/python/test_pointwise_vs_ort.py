"""scripts/pointwise_vs_ort.py: its oneDNN log reading and its matching of 1x1 convs to ORT's nodes,
on a hand-written log and profile (no model, no ORT)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import pointwise_vs_ort as pw  # noqa: E402

CONV = ("onednn_verbose,exec,cpu,convolution,brgconv_1x1:avx512_core,forward_inference,"
        "src_f32::blocked:acdb:f0 wei_f32:p:blocked:Acdb32a:f0 bia_f32::blocked:a:f0 dst_f32::blocked:acdb:f0,"
        "attr-post-ops:sum+eltwise_relu ,alg:convolution_direct,"
        "mb1_ic440oc440_ih7oh7kh1sh1dh0ph0_iw7ow7kw1sw1dw0pw0,%s")
GROUPED = ("onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_inference,src_f32::blocked:acdb:f0,,"
           "alg:convolution_direct,g55mb1_ic440oc440_ih14oh7kh3sh2dh0ph1_iw14ow7kw3sw2dw0pw1,%s")
REORDER = "onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:acdb:f0,,,1x3x224x224,%s"


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def test_keys():
    check(pw.padded(440) == 448 and pw.padded(48) == 48 and pw.padded(8) == 16, "channels rounded up to 16")
    check(pw.pointwise_key(CONV % "0.1") == (448, 7, 448, 1), "a 1x1 conv's key")
    check(pw.pointwise_key(GROUPED % "0.1") is None, "a grouped 3x3 is not a 1x1 conv")
    strided = (CONV % "0.1").replace("ih7oh7kh1sh1", "ih14oh7kh1sh2")
    check(pw.pointwise_key(strided) == (448, 14, 448, 2), "a strided 1x1 conv's key")
    mm = "onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0,attr-post-ops:sum ,,49x440:440x440:49x440,0.09"
    check(pw.matmul_key(pw.verbose_execs([mm])[0][2]) == (448, 7, 448, 1), "a pointwise conv run as a matmul")
    check(pw.matmul_key("1x2x3x4:1x2x4x5:1x2x3x5") is None, "a batched matmul is no pointwise conv")


def test_runs():
    # compile-time executions, then 2 * repeat + 1 runs of [reorder, conv, grouped] (repeat 2)
    lines = ["onednn_verbose,info,prim_template", REORDER % "0.5"]
    times = [0.30, 0.20, 0.10, 0.11, 0.12]
    for t in times:
        lines += [REORDER % "0.01", CONV % t, GROUPED % "0.05"]
    execs = pw.verbose_execs(lines)
    check(len(execs) == 16, "16 exec lines, got %d" % len(execs))
    runs = pw.last_runs(execs, 2)
    check(len(runs) == 2 and all(len(r) == 3 for r in runs), "two runs of three primitives")
    rows = pw.tessera_rows(execs, 2)
    check(len(rows) == 1, "one 1x1 conv per run")
    key, ms, impl, post, src, dst = rows[0]
    check(key == (448, 7, 448, 1) and abs(ms - 0.115) < 1e-9, "median of the last two runs: %r" % (rows[0],))
    check(impl == "brgconv_1x1:avx512_core" and post == "sum+eltwise_relu" and (src, dst) == ("acdb", "acdb"),
          "implementation, post-ops and layouts from the log line")


def test_match():
    profile = {"nodes": [
        {"name": "a", "op": "Conv", "input_shapes": [[1, 448, 7, 7], [448, 448, 1, 1]], "output_shapes": [[1, 448, 7, 7]],
         "median_ms": 0.10},
        {"name": "dw", "op": "Conv", "input_shapes": [[1, 448, 7, 7], [448, 1, 3, 3]], "output_shapes": [[1, 448, 7, 7]],
         "median_ms": 0.02},
        {"name": "b", "op": "FusedConv", "input_shapes": [[1, 448, 7, 7], [448, 448, 1, 1]],
         "output_shapes": [[1, 448, 7, 7]], "median_ms": 0.09},
        {"name": "c", "op": "Conv", "input_shapes": [[1, 32, 112, 112], [48, 32, 1, 1]], "output_shapes": [[1, 48, 56, 56]],
         "median_ms": 0.06},
    ]}
    o_rows = pw.ort_rows(profile)
    check([r[2] for r in o_rows] == ["a", "b", "c"], "ORT's 1x1 convs, the depthwise one left out")
    check(o_rows[2][0] == (32, 112, 48, 2), "stride from the output size")
    t_rows = [((448, 7, 448, 1), 0.11, "x", "", "acdb", "acdb"), ((448, 7, 448, 1), 0.12, "y", "", "acdb", "acdb"),
              ((448, 14, 448, 2), 0.05, "z", "", "acdb", "acdb")]
    pairs, left_t, left_o = pw.match(t_rows, o_rows)
    check([(t[2], o[2]) for t, o in pairs] == [("x", "a"), ("y", "b")], "k-th with k-th of the same key")
    check(left_t == {(448, 14, 448, 2): 1} and left_o == {(32, 112, 48, 2): 1}, "the keys left over on each side")
    table = pw.render(pairs, left_t, left_o)
    check("| 448 -> 448 at 7, s1 | 0.1100 | 0.1000 | +0.0100 |" in table and "| sum of 2 | 0.230 | 0.190 | +0.040 |" in table,
          "the table's rows and sums:\n" + table)


if __name__ == "__main__":
    test_keys()
    test_runs()
    test_match()
    print("ok")
