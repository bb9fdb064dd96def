"""Parsers on real captured outputs: nccl-tests (text + -J JSON), perftest, fio."""

from __future__ import annotations

import json
import shutil

import pytest
from tests.conftest import FIXTURES, need

from podium.bench import ib_perftest, nccl_tests_parse, storage
from podium.bench.grading import grade
from podium.errors import ParseError
from podium.models.common import Status
from podium.runner import LocalRunner, ReplayRunner

NCCL = FIXTURES / "nccl-tests"
PERF = FIXTURES / "perftest"


def test_nccl_text_table_real_output():
    run = nccl_tests_parse.parse_text((NCCL / "ztan_all_reduce_perf_2node_h100.md").read_text())
    assert run.op == "all_reduce"
    assert len(run.rows) == 31
    assert run.ranks == 16 and run.hosts == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert run.devices[15].name == "NVIDIA H100 80GB HBM3" and run.devices[15].bus_id == "0000:8c:00"
    assert run.avg_busbw_gbps == 70.742 and run.out_of_bounds == 0
    first, last = run.rows[0], run.rows[-1]
    assert (first.size_bytes, first.count, first.dtype, first.redop, first.root) == (8, 2, "float", "sum", -1)
    assert last.out_of_place.model_dump() == {
        "time_us": 47535.0,
        "algbw_gbps": 180.71,
        "busbw_gbps": 338.82,
        "wrong": 0.0,
    }
    assert last.in_place.model_dump() == {
        "time_us": 47743.0,
        "algbw_gbps": 179.92,
        "busbw_gbps": 337.35,
        "wrong": 0.0,
    }


def test_nccl_result_is_graded_unknown_for_16_gpus():
    run = nccl_tests_parse.parse_text((NCCL / "ztan_all_reduce_perf_2node_h100.md").read_text())
    res = grade(nccl_tests_parse.to_result(run, sku="H100"))
    assert res.value == 338.82 and res.params["gpus"] == 16 and res.params["nodes"] == 2
    assert res.verdict == Status.UNKNOWN
    assert res.reason == "no reference for H100 nccl_tests/busbw_gbps/all_reduce with 16 GPUs"


def test_nccl_json_matches_text():
    text_run = nccl_tests_parse.parse_text((NCCL / "ztan_all_reduce_perf_2node_h100.md").read_text())
    json_run = nccl_tests_parse.parse((NCCL / "ztan_all_reduce_perf_2node_h100.derived.json").read_text())
    assert json_run.source_format == "json" and json_run.op == "all_reduce"
    assert json_run.rows == text_run.rows
    assert json_run.devices == text_run.devices
    assert json_run.avg_busbw_gbps == 70.742


def test_nccl_older_layout_without_root_and_error_column():
    # nccl-tests before the `root` column: `error` holds a float; rows copied from the real fixture
    text = """# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
#                                                     out-of-place                       in-place
#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
  4294967296    1073741824   float     sum    24361  176.31  330.58  0e+00    24365  176.27  330.51  0e+00
  8589934592    2147483648   float     sum    47535  180.71  338.82  0e+00    47743  179.92  337.35  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 70.742
"""
    run = nccl_tests_parse.parse_text(text)
    assert len(run.rows) == 2 and run.rows[1].root is None
    assert run.rows[1].out_of_place.busbw_gbps == 338.82 and run.rows[1].in_place.wrong == 0.0


def test_nccl_per_iteration_layout():
    header = "#        size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%"
    row = "  8589934592    2147483648     float     sum      -1    47535  180.71  338.82       0    47000    48000    47900     0.50    47743  179.92  337.35       0    47100    48100    48000     0.40"
    run = nccl_tests_parse.parse_text(header + "\n" + row + "\n")
    assert run.rows[0].out_of_place.busbw_gbps == 338.82
    assert run.rows[0].in_place.busbw_gbps == 337.35


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("", "empty output"),
        ("hello world\nnot nccl", "no nccl-tests results header"),
        (
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n",
            "no result rows",
        ),
    ],
)
def test_nccl_garbage_raises_parse_error(text, msg):
    with pytest.raises(ParseError, match=msg):
        nccl_tests_parse.parse_text(text)


def test_nccl_json_garbage():
    with pytest.raises(ParseError, match="not JSON"):
        nccl_tests_parse.parse_json("{trunc")
    with pytest.raises(ParseError, match="no 'results' list"):
        nccl_tests_parse.parse_json(json.dumps({"version": 2}))


def test_ib_write_bw_gbits_bidirectional():
    run = ib_perftest.parse_bw((PERF / "alibaba_ib_write_bw_bidir_q4_gbits_client.txt").read_text())
    assert run.unit_reported == "Gb/sec" and len(run.rows) == 23
    assert run.info.qps == 4 and run.info.bidirectional and run.info.device == "ionic_1"
    assert run.rows[-1].model_dump() == {
        "size_bytes": 8388608,
        "iterations": 20000,
        "bw_peak_gbps": 779.21,
        "bw_avg_gbps": 779.21,
        "msg_rate_mpps": 0.011611,
    }
    res = grade(ib_perftest.bw_result(run, link_gbps=400))
    assert res.metric == "bidir_bw_gbps" and res.verdict == Status.UNKNOWN  # the reference is unidirectional


def test_ib_write_bw_mb_per_sec_with_cpu_frequency_noise():
    run = ib_perftest.parse_bw((PERF / "hdr_a100_ib_write_bw_mbsec_cpufreq_client.txt").read_text())
    assert run.unit_reported == "MB/sec" and len(run.rows) == 23 and not run.info.bidirectional
    # perftest MB = 2^20 bytes: 23317.65 MB/s = 195.6 Gb/s on an HDR (200G) link
    assert run.rows[-1].bw_avg_gbps == round(23317.65 * (1 << 20) * 8 / 1e9, 4) == 195.6026
    res = grade(ib_perftest.bw_result(run, link_gbps=200))
    assert res.verdict == Status.UNKNOWN and res.reason == "no reference for NIC-200G ib_write_bw/bw_gbps"
    res400 = grade(ib_perftest.bw_result(run, link_gbps=400))
    assert res400.verdict == Status.FAIL  # 195.6 Gb/s on a NIC sold as 400G


def test_ib_write_lat():
    run = ib_perftest.parse_lat((PERF / "hdr_a100_ib_write_lat_server.txt").read_text())
    assert len(run.rows) == 23 and run.info.test == "RDMA_Write Latency Test"
    assert run.rows[0].model_dump() == {
        "size_bytes": 2,
        "iterations": 1000,
        "t_min_us": 1.79,
        "t_max_us": 5.36,
        "t_typical_us": 1.87,
        "t_avg_us": 1.88,
        "t_stdev_us": 0.19,
        "p99_us": 2.04,
        "p999_us": 5.36,
    }
    assert ib_perftest.lat_result(run).value == 1.87


def test_ib_garbage():
    with pytest.raises(ParseError, match="no perftest results header"):
        ib_perftest.parse_bw("Couldn't connect to 10.0.0.1:18515\n")
    with pytest.raises(ParseError, match="no result rows"):
        ib_perftest.parse_bw(
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        )


def test_ib_run_without_rdma_device_is_skipped():
    replay = ReplayRunner(
        {"ibv_devices": "    device          \t   node GUID\n    ------          \t----------------\n"}
    )
    res = ib_perftest.run(replay, "ib_write_bw")
    assert res[0].verdict == Status.SKIPPED and res[0].reason == "no RDMA device (ibv_devices lists none)"
    res = ib_perftest.run(ReplayRunner({}), "ib_write_lat")
    assert res[0].verdict == Status.SKIPPED and res[0].reason == "no RDMA tooling: `ibv_devices`: not found"


def test_fio_captured_json():
    run = storage.parse_fio_json((FIXTURES / "fio" / "fio-3.33_podium-smoke_jobs.json").read_text())
    assert run.fio_version == "fio-3.33" and [j.name for j in run.jobs] == [
        "seq_read",
        "seq_write",
        "rand_read_4k",
        "rand_write_4k",
        "small_files",
    ]
    values = {r.metric: (r.value, r.unit) for r in storage.to_results(run, "/x")}
    assert values == {
        "seq_read_mbps": (1048.576, "MB/s"),
        "seq_write_mbps": (1677.722, "MB/s"),
        "rand_read_iops": (12412.121, "IOPS"),
        "rand_write_iops": (186181.818, "IOPS"),
        "small_file_iops": (64000.0, "IOPS"),
    }


def test_fio_garbage():
    with pytest.raises(ParseError, match="no JSON object"):
        storage.parse_fio_json("fio: pid=0, err=2/file:filesetup.c")
    with pytest.raises(ParseError, match="no 'jobs' list"):
        storage.parse_fio_json('{"fio version": "fio-3.33"}')


def test_fio_real_tiny_run(tmp_path):
    need(shutil.which("fio") is not None, "fio not installed (APT_PKGS in scripts/test.sh has it)")
    results = storage.run(LocalRunner(raw_dir=tmp_path / "raw"), str(tmp_path), "smoke")
    assert [r.metric for r in results] == [
        "seq_read_mbps",
        "seq_write_mbps",
        "rand_read_iops",
        "rand_write_iops",
        "small_file_iops",
    ]
    assert all(r.value > 0 for r in results)
    assert results[0].provenance.command.startswith("fio --output-format=json")
    assert (tmp_path / "raw" / "fio.txt").is_file()
    assert not (tmp_path / ".podium-fio").exists()  # test files removed
