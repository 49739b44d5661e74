from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import dsim

THREE_HOPS = textwrap.dedent(
    """\
    name = "three-hops"
    duration = "10s"
    warmup = "1s"

    [nodes]
    hosts = ["A", "B"]
    routers = ["R1", "R2"]

    [[link]]
    from = "A"
    to = "R1"
    rate = "10Mbps"
    delay = "1ms"

    [[link]]
    from = "R1"
    to = "R2"
    rate = "1.5Mbps"
    delay = "10ms"
    queue = { type = "droptail", limit = "20p" }

    [[link]]
    from = "R2"
    to = "B"
    rate = "100Mbps"
    delay = "250us"

    [[flow]]
    name = "f"
    src = "A"
    dst = "B"
    app = { type = "cbr", rate = "1Mbps", size = "1500B", spacing_variation = "10%" }

    [[flow]]
    name = "p"
    src = "A"
    dst = "B"
    app = { type = "poisson", rate = "400kbps", size = "500B" }
    """
)


@pytest.fixture
def three_hops_text() -> str:
    return THREE_HOPS


@pytest.fixture
def three_hops_file(tmp_path: Path) -> Path:
    p = tmp_path / "three-hops.toml"
    p.write_text(THREE_HOPS)
    return p


def three_hops_builder() -> dsim.Scenario:
    sc = dsim.Scenario(duration="10s", warmup="1s", name="three-hops")
    sc.hosts("A", "B").routers("R1", "R2")
    sc.link("A", "R1", rate="10Mbps", delay="1ms")
    sc.link("R1", "R2", rate="1.5Mbps", delay="10ms", queue=dsim.droptail("20p"))
    sc.link("R2", "B", rate="100Mbps", delay="250us")
    sc.flow("f", src="A", dst="B", app=dsim.cbr(rate="1Mbps", size="1500B", spacing_variation="10%"))
    sc.flow("p", src="A", dst="B", app=dsim.poisson(rate="400kbps", size="500B"))
    return sc


@pytest.fixture
def builder() -> dsim.Scenario:
    return three_hops_builder()


@pytest.fixture
def refused():
    """`refused(d, path, rule)`: validating the scenario dict `d` fails at key `path` with a
    rule containing `rule`."""

    def check(d: dict, path: str, rule: str) -> None:
        with pytest.raises(dsim.ScenarioError) as info:
            dsim.Scenario.from_dict(d).validate()
        assert info.value.path == path, str(info.value)
        assert rule in info.value.rule, str(info.value)

    return check
