#!/usr/bin/env python3
"""Writes a large vault fixture for scale tests: N ES256 passkeys spread over a few RPs.

    python3 vault-fixtures/generate_large.py 1000000 > /tmp/large.json
    credemu --vault /tmp/large.db vault import /tmp/large.json

Real P-256 keys (made with the `openssl` command line), but only --keys of them (default 64), each shared by
many records: the fixture format does not require distinct keys, and making a million takes long. Credential
IDs and user handles are distinct and derived from the record number, so the output is deterministic for a
given key set; times are spread over 2026. The result is in canonical export form (members in schema order,
records sorted by RP ID, user name, creation time and credential ID), so export after import gives it back.
"""
import argparse
import base64
import os
import subprocess
import sys
import tempfile
import time


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def p256_pkcs8() -> bytes:
    with tempfile.TemporaryDirectory() as d:
        pem = os.path.join(d, "k.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", pem],
                       check=True, capture_output=True)
        return subprocess.run(["openssl", "pkcs8", "-topk8", "-nocrypt", "-outform", "DER", "-in", pem],
                              check=True, capture_output=True).stdout


def rfc3339(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, help="passkeys to write")
    parser.add_argument("--keys", type=int, default=64, help="distinct P-256 keys to share among the records")
    parser.add_argument("--rps", type=int, default=4, help="RPs: rp0.example.com ... (the first holds half the passkeys)")
    args = parser.parse_args()
    keys = [b64u(p256_pkcs8()) for _ in range(max(1, args.keys))]
    start = 1_767_225_600  # 2026-01-01T00:00:00Z
    records = []
    for i in range(args.count):
        rp = 0 if i % 2 == 0 or args.rps == 1 else 1 + (i // 2) % (args.rps - 1)
        created = start + (i * 7919) % 31_000_000
        used = created + 3600 if i % 5 == 0 else None
        records.append((f"rp{rp}.example.com", f"user{i:07d}@example.com", created, i.to_bytes(4, "big") + b"credemu-scale-id", i, used))
    records.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    out = sys.stdout
    out.write('{\n  "format": "credemu-vault",\n  "version": 1,\n  "passwords": [],\n  "passkeys": [')
    for n, (rp, user, created, cid, i, used) in enumerate(records):
        out.write(("," if n else "") + f"""
    {{
      "credentialId": "{b64u(cid)}",
      "rpId": "{rp}",
      "userHandle": "{b64u(b"user-" + i.to_bytes(4, "big"))}",
      "userName": "{user}",
      "displayName": "User {i}",
      "algorithm": "ES256",
      "privateKey": "{keys[i % len(keys)]}",
      "signCount": 0,
      "counter": "zero",
      "backupEligible": true,
      "backupState": true,
      "aaguid": "00000000-0000-0000-0000-000000000000",
      "discoverable": true,
      "attestation": "none",
      "hidden": false,
      "hiddenAt": null,
      "created": "{rfc3339(created)}",
      "lastUsed": {f'"{rfc3339(used)}"' if used else "null"}
    }}""")
    out.write("\n  ]\n}\n" if records else "]\n}\n")


if __name__ == "__main__":
    main()
