"""The test-by-pack matrix the pytest plugin prints at the end of a session: each marked test's outcome with
every pack, and for a failure the provider's outcome and reason from the profile's event log."""
import json

# Worst first: the cell shows the worst outcome of a test's setup, call and teardown.
RANK = ["error", "failed", "xpassed", "xfailed", "skipped", "passed"]
LABEL = {"error": "ERROR", "failed": "FAIL", "xpassed": "XPASS", "xfailed": "xfail", "skipped": "skip", "passed": "pass"}


# Outcomes in which the provider did not do what was asked, whatever the reason says.
DECLINED = {"noop", "ignored", "dropped", "rejected", "error", "aborted", "timedOut", "notFilled"}


def provider_verdict(events):
    """What the provider last declined (`create: noop (noRecentlyUsedPassword)`, `signal: ignored (success)`),
    else `no refusal; last: ...`, then the findings' codes; "" for an empty log."""
    significant = [e for e in events if e.get("kind") != "finding"]
    if not significant:
        return ""
    declined = [e for e in significant if e.get("reason") != "success" or e.get("outcome") in DECLINED]
    if declined:
        event = declined[-1]
        text = f"{event['kind']}: {event['outcome']} ({event['reason']})"
    else:
        event = significant[-1]
        text = f"no refusal; last: {event['kind']}: {event['outcome']}"
    findings = sorted({e["reason"] for e in events if e.get("kind") == "finding"})
    if findings:
        text += "; findings: " + ", ".join(findings)
    return text


class Matrix:
    def __init__(self):
        self.cells = {}  # (row, pack) -> {"outcome", "platform", "verdict", "message"}
        self.rows = []
        self.packs = []

    def record(self, row, pack, outcome, platform=None, verdict="", message=""):
        """One phase's outcome of the test `row` with `pack`; the cell keeps the worst, with its verdict."""
        if row not in self.rows:
            self.rows.append(row)
        if pack not in self.packs:
            self.packs.append(pack)
        cell = self.cells.setdefault((row, pack), {"outcome": "passed", "platform": platform, "verdict": "", "message": ""})
        if RANK.index(outcome) < RANK.index(cell["outcome"]):
            cell["outcome"] = outcome
            if verdict or message:
                cell["verdict"], cell["message"] = verdict, message
        cell["platform"] = platform or cell["platform"]

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
                    note = f"{row} [{where}]: {LABEL[cell['outcome']]}"
                    if cell["message"]:
                        note += f": {cell['message']}"
                    if cell["verdict"]:
                        note += f"\n    provider: {cell['verdict']}"
                    notes.append(note)
        if notes:
            out += [""] + notes
        return [line.rstrip() for text in out for line in text.split("\n")]

    def json(self):
        return json.dumps({"packs": self.packs, "tests": [
            {"test": row, "cells": {p: self.cells[(row, p)] for p in self.packs if (row, p) in self.cells}} for row in self.rows]}, indent=2)
