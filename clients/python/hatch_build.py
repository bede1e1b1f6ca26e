"""The binary wheel: with CREDEMU_WHEEL_BINARY (a stripped credemu) and CREDEMU_WHEEL_PLATFORM (its platform tag,
such as manylinux_2_35_x86_64), `make dist` (packaging/wheel.sh) builds a wheel that carries the binary as
credemu/bin/credemu, tagged py3-none-PLATFORM: any Python 3, this platform only. Without them the wheel is the
pure-Python client as before (`pip install ./clients/python`), which finds the binary on $CREDEMU or PATH."""
import os

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version, build_data):
        binary = os.environ.get("CREDEMU_WHEEL_BINARY")
        if self.target_name != "wheel" or not binary:
            return
        platform = os.environ.get("CREDEMU_WHEEL_PLATFORM")
        if not platform:
            raise RuntimeError("CREDEMU_WHEEL_BINARY needs CREDEMU_WHEEL_PLATFORM, the binary's platform tag")
        if not os.access(binary, os.X_OK):
            raise RuntimeError(f"CREDEMU_WHEEL_BINARY={binary} is not an executable file")
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform}"
        build_data["force_include"][binary] = "credemu/bin/credemu"
