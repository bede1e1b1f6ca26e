"""The test-by-pack matrix the pytest plugin prints at the end of a session: each marked test's outcome with
every pack, and for a failure the provider's outcome and reason from the profile's event log."""
import json

# Worst first: the cell shows the worst outcome of a test's setup, call and teardown.
RANK = ["error", "failed", "xpassed", "xfailed", "skipped", "passed"]
LABEL = {"error": "ERROR", "failed": "FAIL", "xpassed": "XPASS", "xfailed": "xfail", "skipped": "skip", "passed": "pass"}


def provider_verdict(events):
    """What the provider last did that was not a plain success (`create: noop (noRecentlyUsedPassword)`), the
    last event when all succeeded, and the findings' codes; "" for an empty log."""
    significant = [e for e in events if e.get("kind") != "finding"]
    if not significant:
        return ""
    declined = [e for e in significant if e.get("reason") != "success"]
    event = (declined or significant)[-1]
    text = f"{event['kind']}: {event['outcome']} ({event['reason']})"
    findings = sorted({e["reason"] for e in events if e.get("kind") == "finding"})
    if findings:
        text += "; findings: " + ", ".join(findings)
    return text


class Matrix:
    def __init__(self):
        self.cells = {}  # (row, pack) -> {"outcome", "platform", "verdict"}
        self.rows = []
        self.packs = []

    def record(self, row, pack, outcome, platform=None, verdict=""):
        if row not in self.rows:
            self.rows.append(row)
        if pack not in self.packs:
            self.packs.append(pack)
        cell = self.cells.setdefault((row, pack), {"outcome": "passed", "platform": platform, "verdict": ""})
        if RANK.index(outcome) < RANK.index(cell["outcome"]):
            cell["outcome"] = outcome
        cell["platform"] = platform or cell["platform"]
        if verdict:
            cell["verdict"] = verdict

    def __bool__(self):
        return bool(self.cells)

    def lines(self):
        """The table, then one line per cell that did not pass, with the provider's verdict."""
        width = max(len(r) for r in self.rows)
        columns = [max(len(p), 5) for p in self.packs]
        out = ["test".ljust(width) + "  " + "  ".join(p.ljust(w) for p, w in zip(self.packs, columns))]
        for row in self.rows:
            cells = [LABEL[self.cells[(row, p)]["outcome"]] if (row, p) in self.cells else "-" for p in self.packs]
            out.append(row.ljust(width) + "  " + "  ".join(c.ljust(w) for c, w in zip(cells, columns)))
        notes = []
        for row in self.rows:
            for pack in self.packs:
                cell = self.cells.get((row, pack))
                if cell and cell["outcome"] != "passed":
                    where = f"{pack}@{cell['platform']}" if cell["platform"] else pack
                    notes.append(f"{row} [{where}]: {LABEL[cell['outcome']]}" + (f": {cell['verdict']}" if cell["verdict"] else ""))
        if notes:
            out += [""] + notes
        return [line.rstrip() for line in out]

    def json(self):
        return json.dumps({"packs": self.packs, "tests": [
            {"test": row, "cells": {p: self.cells[(row, p)] for p in self.packs if (row, p) in self.cells}} for row in self.rows]}, indent=2)
