"""Parser for ``dcgmi diag -j`` JSON: the DCGM 3.x shape ("DCGM GPU Diagnostic", results with
``gpu_ids``/``gpu_id`` and string warnings) and the 4.x shape ("DCGM Diagnostic" with entity results,
object warnings, ``test_summary``, and ``metadata``/``entity_groups`` at the root)."""

from __future__ import annotations

import json
from typing import Any

from podium.errors import ParseError
from podium.health.models import DcgmDiag, DcgmTestResult

SOURCE = "dcgmi diag -j"
_STATUS = {
    "pass": "pass",
    "fail": "fail",
    "warn": "warn",
    "warning": "warn",
    "skip": "skip",
    "skipped": "skip",
}


def _status(value: Any) -> str:
    s = str(value or "").strip().lower()
    return _STATUS.get(s, "notrun" if s in {"not run", "notrun", ""} else s)


def _warnings(items: Any) -> list[str]:
    out = []
    for w in items or []:
        if isinstance(w, dict):
            out.append(str(w.get("warning") or w.get("message") or json.dumps(w)))
        else:
            out.append(str(w))
    return out


def _entity(result: dict) -> str:
    if "entity_id" in result:
        group = str(result.get("entity_group") or "GPU").lower()
        return f"{group} {result['entity_id']}"
    ids = result.get("gpu_ids", result.get("gpu_id"))
    if ids is None or ids == "":
        return "all"
    ids = str(ids)
    return f"gpus {ids}" if "," in ids else f"gpu {ids}"


def parse_dcgm_diag(text: str, source: str = SOURCE) -> DcgmDiag:
    """Parse a ``dcgmi diag -j`` document (text before the first '{' is ignored, as dcgmi may print a
    'Successfully ran diagnostic' line first). Raises :class:`ParseError` on anything else."""
    if not text or "{" not in text:
        raise ParseError(source, "no JSON object in dcgmi diag output")
    try:
        doc = json.loads(text[text.index("{") :])
    except json.JSONDecodeError as e:
        raise ParseError(source, f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(doc, dict):
        raise ParseError(source, "top level is not a JSON object")
    if isinstance(doc.get("DCGM Diagnostic"), dict):
        shape, body = "4.x", doc["DCGM Diagnostic"]
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        version = meta.get("version") or doc.get("version")
        driver = meta.get("Driver Version Detected") or doc.get("driver_version")
    elif isinstance(doc.get("DCGM GPU Diagnostic"), dict):
        shape, body = "3.x", doc["DCGM GPU Diagnostic"]
        version = body.get("version") or doc.get("version")
        driver = (
            body.get("Driver Version Detected")
            or doc.get("Driver Version Detected")
            or body.get("driver_version_detected")
        )
    else:
        raise ParseError(
            source, "neither 'DCGM Diagnostic' (4.x) nor 'DCGM GPU Diagnostic' (3.x) at top level"
        )
    diag = DcgmDiag(
        schema_shape=shape,
        version=str(version) if version else None,
        driver_version=str(driver) if driver else None,
        runtime_error=body.get("runtime_error") or doc.get("runtime_error"),
    )
    categories = body.get("test_categories", [])
    if not isinstance(categories, list):
        raise ParseError(source, "'test_categories' is not a list")
    for cat in categories:
        if not isinstance(cat, dict) or not isinstance(cat.get("tests"), list):
            raise ParseError(source, "a test category without a 'tests' list")
        for test in cat["tests"]:
            if not isinstance(test, dict) or "name" not in test:
                raise ParseError(source, f"a test without a name in category {cat.get('category')!r}")
            results = test.get("results") or []
            if not results and isinstance(test.get("test_summary"), dict):
                results = [{"status": test["test_summary"].get("status")}]
            for r in results:
                if not isinstance(r, dict):
                    raise ParseError(source, f"result of {test['name']!r} is not an object")
                diag.results.append(
                    DcgmTestResult(
                        category=str(cat.get("category", "")),
                        test=str(test["name"]),
                        entity=_entity(r),
                        status=_status(r.get("status")),
                        warnings=_warnings(r.get("warnings")),
                    )
                )
    if not diag.results and not diag.runtime_error:
        raise ParseError(source, "no test results and no runtime_error")
    return diag
