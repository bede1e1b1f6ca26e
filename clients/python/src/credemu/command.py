"""The `credemu` console command a wheel installs: the binary `credemu.find_binary` finds (the wheel's own unless
$CREDEMU names another), run in this process's place with the same arguments, so its exit status and signals are
the binary's."""
import os
import sys

from .errors import CredemuError
from .server import find_binary


def main():
    try:
        # On PATH this command is itself `credemu`: passed over, so a wheel without a binary finds another or none.
        binary = find_binary(skip=sys.argv[0])
    except CredemuError as error:
        print(f"credemu: {error.message}", file=sys.stderr)
        return 127
    os.execv(binary, [binary, *sys.argv[1:]])
