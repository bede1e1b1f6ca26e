"""The pytest plugin, run on example test files through pytester: fixtures, the pack marker and option, the
matrix with the provider's verdicts, and the failure report."""
import json
import os
import re

import pytest

UPGRADE_TEST = '''
import json, os
import pytest
from webauthn import generate_registration_options
from credemu import CredemuError

@pytest.mark.credemu
def test_automatic_upgrade_without_a_password(credemu_profile, credemu_pack):
    options = generate_registration_options(rp_id="shop.example.com", rp_name="Shop", user_name="alice")
    try:
        credemu_profile.create(options, origin="https://shop.example.com", mediation="conditional")
    except CredemuError as error:
        with open(os.environ["VERDICTS"], "a") as out:
            out.write(json.dumps([credemu_pack, error.reason]) + "\\n")
        raise

@pytest.mark.credemu(pack="apple")
def test_pinned_to_one_pack(credemu_profile):
    assert credemu_profile.get_profile()["pack"] == "apple"
'''


def packs_of(pytester):
    """The passkey providers `--credemu-packs=all` plays (a security key is plugged in, not a provider)."""
    listing = pytester.run(os.environ["CREDEMU"], "providers", "list").stdout.str()
    return [p["id"] for p in json.loads(listing)["providers"] if p["model"] == "passkeyProvider"]


def matrix_lines(output):
    text = output.str()
    assert "credemu: tests by pack" in text, text
    lines = []
    for line in text.split("credemu: tests by pack", 1)[1].splitlines()[1:]:
        if line.startswith("===") or line.startswith("___"):
            break
        lines.append(line)
    return lines


def test_fixtures_give_each_test_a_fresh_profile_of_the_marked_pack_and_platform(pytester):
    pytester.makepyfile('''
        import pytest
        from webauthn import generate_registration_options

        def test_default_is_gpm_on_chrome_desktop(credemu_profile, credemu_server, credemu_client):
            assert credemu_profile.get_profile()["pack"] == "gpm" and credemu_profile.platform == "chrome-desktop"
            assert credemu_client.url == credemu_server.url == credemu_profile.url
            credemu_profile.create(generate_registration_options(rp_id="a.example.com", rp_name="A", user_name="u"),
                                   origin="https://a.example.com")
            assert len(credemu_profile.passkeys()) == 1

        def test_the_next_profile_is_empty(credemu_profile):
            assert credemu_profile.passkeys() == []

        @pytest.mark.credemu(pack="apple", platform="ios", automatic_passkey_upgrades=False, osVersion="18.2")
        def test_marker(credemu_profile):
            settings = credemu_profile.get_profile()
            assert (settings["pack"], settings["platform"]) == ("apple", "ios")
            assert settings["automaticPasskeyUpgrades"] is False and settings["osVersion"] == "18.2"

        @pytest.mark.parametrize("credemu_pack", ["bitwarden", "keepassxc"])
        def test_parametrized(credemu_profile, credemu_pack):
            assert credemu_profile.get_profile()["pack"] == credemu_pack
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5)


def test_packs_all_runs_each_marked_test_per_pack_and_prints_the_providers_verdicts(pytester, monkeypatch):
    verdicts = pytester.path / "verdicts.jsonl"
    monkeypatch.setenv("VERDICTS", str(verdicts))
    pytester.makepyfile(test_upgrade=UPGRADE_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--credemu-packs=all", "-rA")
    packs = packs_of(pytester)
    assert len(packs) >= 8
    failed = dict(json.loads(line) for line in verdicts.read_text().splitlines())
    assert failed, "no pack declines an automatic upgrade without a saved password"
    assert set(failed) < set(packs), "some pack (one that ignores mediation) creates a passkey anyway"
    result.assert_outcomes(passed=len(packs) - len(failed) + 1, failed=len(failed))

    lines = matrix_lines(result.stdout)
    header = lines[0].split()
    assert header == ["test"] + packs
    row = next(line for line in lines if line.startswith("test_upgrade.py::test_automatic_upgrade_without_a_password "))
    cells = row.split()[1:]
    assert cells == ["FAIL" if p in failed else "pass" for p in packs]
    assert not any("test_pinned_to_one_pack" in line for line in lines), "a test that pins its pack is not multiplied"
    for pack, reason in failed.items():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"test_upgrade.py::test_automatic_upgrade_without_a_password [{pack}@"))
        assert "]: FAIL: credemu.errors.CredemuError: POST /profiles/" in lines[at], lines[at]
        # The verdict is the provider's, read back from the profile's event log: the same reason the API gave.
        assert re.fullmatch(r"    provider: create: \w+ \(" + reason + r"\)", lines[at + 1]), lines[at + 1]


def test_a_marker_lists_packs_without_the_option_and_the_matrix_can_be_written_as_json(pytester):
    pytester.makepyfile('''
        import pytest

        @pytest.mark.credemu(packs=["gpm", "apple"], platform="chrome-desktop")
        def test_platform_where_the_pack_models_it(credemu_profile, credemu_pack):
            expected = "chrome-desktop" if credemu_pack == "gpm" else "safari"
            assert credemu_profile.get_profile()["platform"] == expected

        @pytest.mark.credemu(packs="gpm,bitwarden")
        @pytest.mark.parametrize("user", ["alice", "bob"])
        def test_with_other_parameters(credemu_profile, user):
            assert user != "bob" or credemu_profile.pack != "bitwarden"

        @pytest.mark.credemu(packs=["gpm", "apple"])
        @pytest.mark.xfail(reason="the provider declines", strict=True)
        def test_expected_divergence(credemu_profile):
            credemu_profile.get({"challenge": "AAAA", "rpId": "shop.example.com"}, origin="https://shop.example.com")

        @pytest.mark.credemu(packs=["gpm", "apple"], xfail={"apple": "said to differ", "bitwarden": "not run here"})
        def test_a_divergence_that_is_gone(credemu_profile):
            assert credemu_profile.get_client_capabilities()
    ''')
    out = pytester.path / "matrix.json"
    result = pytester.runpytest("-p", "no:cacheprovider", f"--credemu-matrix-json={out}")
    result.assert_outcomes(passed=6, failed=2, xfailed=2)
    matrix = json.loads(out.read_text())
    assert matrix["packs"] == ["gpm", "apple", "bitwarden"]
    cells = {t["test"]: {p: c["outcome"] for p, c in t["cells"].items()} for t in matrix["tests"]}
    name = "test_a_marker_lists_packs_without_the_option_and_the_matrix_can_be_written_as_json.py"
    assert cells[f"{name}::test_platform_where_the_pack_models_it"] == {"gpm": "passed", "apple": "passed"}
    assert cells[f"{name}::test_with_other_parameters[alice]"] == {"gpm": "passed", "bitwarden": "passed"}
    assert cells[f"{name}::test_with_other_parameters[bob]"] == {"gpm": "passed", "bitwarden": "failed"}
    assert cells[f"{name}::test_expected_divergence"] == {"gpm": "xfailed", "apple": "xfailed"}
    assert cells[f"{name}::test_a_divergence_that_is_gone"] == {"gpm": "passed", "apple": "failed"}
    assert "::test_a_divergence_that_is_gone [apple@safari]: FAIL: [XPASS(strict)] apple: said to differ" in result.stdout.str()
    expected = [t for t in matrix["tests"] if t["test"].endswith("test_expected_divergence")][0]
    assert expected["cells"]["apple"]["verdict"] == "get: error (noCredential)"
    assert expected["cells"]["apple"]["platform"] == "safari"
    assert "::test_expected_divergence [apple@safari]: xfail: credemu.errors.CredemuError: POST /profiles/" in result.stdout.str()
    assert "    provider: get: error (noCredential)" in result.stdout.str()


def test_an_xfail_for_a_pack_credemu_does_not_have_is_a_collection_error(pytester):
    pytester.makepyfile('''
        import pytest

        @pytest.mark.credemu(packs="all", xfail={"no-such-pack": "typo"})
        def test_x(credemu_profile):
            pass
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*UsageError*xfail names packs credemu does not have:*no-such-pack*"])


def test_a_failure_report_carries_the_profiles_events_and_the_server_log(pytester):
    pytester.makepyfile('''
        def test_fails(credemu_profile):
            credemu_profile.save_password("alice", "pw", origin="https://shop.example.com")
            assert False, "the RP's own assertion"
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*credemu events*", "* password: saved (success)*", "*credemu server log*", "http://127.0.0.1:*"])
    assert "credemu: tests by pack" not in result.stdout.str(), "no matrix when no test ran across packs"


def test_a_missing_binary_is_an_error_that_names_the_fix(pytester, monkeypatch):
    monkeypatch.setenv("CREDEMU", str(pytester.path / "no-such-credemu"))
    pytester.makepyfile('''
        def test_needs_the_server(credemu_profile):
            pass
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*CredemuError*BinaryNotFound*not an executable credemu binary*"])


def test_an_unused_plugin_starts_no_server(pytester):
    # With a binary that does not exist, any attempt to start a server or list packs would be an error.
    pytester.makepyfile('''
        def test_plain():
            assert 1 + 1 == 2
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--credemu-binary=/nonexistent", "--credemu-packs=all")
    result.assert_outcomes(passed=1)


def test_a_server_left_running_fails_its_test_and_is_stopped(pytester):
    pytester.makepyfile('''
        import credemu

        def test_forgets_to_stop_it():
            server = credemu.Server().start()
            with open("pid", "w") as out:
                out.write(str(server.process.pid))

        def test_stops_it():
            with credemu.Server() as server:
                assert server.running
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*the test left 1 credemu.Server(s) running*"])
    pid = int((pytester.path / "pid").read_text())
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z", "the leaked server still runs"


def test_a_module_fixtures_server_left_running_fails_at_its_end_and_one_taken_lazily_may_outlive_a_test(pytester):
    pytester.makepyfile('''
        import credemu
        import pytest

        @pytest.fixture(scope="module")
        def server():
            return credemu.Server().start()     # never stopped

        def test_uses_it(server):
            assert server.running

        @pytest.fixture(scope="module")
        def tidy():
            with credemu.Server() as server:
                yield server

        def test_takes_a_module_fixture_lazily(request):
            assert request.getfixturevalue("tidy").running

        def test_finds_it_still_running(tidy):
            assert tidy.running
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*the module-scoped fixture server left 1 credemu.Server(s) running*"])
