"""The Ray engine's dealings with the cluster: how many actors and where (``actor_plan``), joining it
(``connect``), paths every node can read (``absolute_paths``), what a lost worker is (``lost_errors``), where
its logs are (``session_logs``) and which node is which in the log (``node_line``)."""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path
from typing import Any

from pairaudit.errors import ConfigError

ACTOR_START_S = 300.0  # an actor not started by then cannot be placed (other jobs hold the cluster's CPUs)


def actor_plan(nodes: list[dict[str, Any]], workers: int | None, models: bool) -> tuple[int, dict[str, Any]]:
    """How many actors, and the Ray resources of each: one CPU, spread over the nodes. When the cluster
    has GPUs and ``models`` (a stage that runs models, ``Stage.uses_models``: embedder, reference model) runs,
    actors go where the GPUs are: each asks
    for an equal fraction of a GPU (a GPU node's GPUs shared by its CPUs), so several actors share one GPU
    and every actor's models run on a GPU; CPU-only nodes then get no actor."""
    alive = [n["Resources"] for n in nodes if n.get("Alive", True)]
    opts: dict[str, Any] = {"num_cpus": 1, "scheduling_strategy": "SPREAD"}
    gpu_nodes = [r for r in alive if r.get("GPU", 0) > 0 and r.get("CPU", 0) >= 1]
    if not gpu_nodes or not models:
        cpus = sum(int(r.get("CPU", 0)) for r in alive)
        if cpus < max(1, workers or 0):  # an actor that cannot be placed waits for ever: say so now
            asked = f"--ray-workers {workers} asks for {workers} actors" if workers else "the scan needs an actor"
            fix = (f"pass --ray-workers N with N <= {cpus} (or leave it out: one actor per CPU), or add nodes"
                   if cpus else "add a node with CPUs to the cluster")
            raise ConfigError(f"{asked} of 1 CPU each, but the Ray cluster has {cpus} CPU(s) on {len(alive)} "
                              "live node(s): an actor without a CPU would wait for ever", fix=fix)
        return workers or cpus, opts
    share = math.floor(min(1.0, *(r["GPU"] / int(r["CPU"]) for r in gpu_nodes)) * 10_000) / 10_000
    fit = sum(min(int(r["CPU"]), int(r["GPU"] / share + 1e-9)) for r in gpu_nodes)
    return min(workers or fit, fit), {**opts, "num_gpus": share}


SHARD_PATHS = ("path", "file")  # a shard spec's paths (io.shards)
CONFIG_PATHS = ("tokenizer", "embedder", "reference", "reward_model", "policy", "decisions")  # a path or a hub id


def absolute_paths(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``d`` with its values at ``keys`` that are relative paths existing here made absolute: a Ray actor's
    working directory is not the driver's (on a cluster, Ray's session folder), so a relative source, model or
    output path would be read elsewhere there. Hub ids and absolute paths are left as they are.

    Args:
        d: a shard spec or a config's JSON (not changed).
        keys: the keys that may hold a path.

    Returns:
        A copy of ``d``.
    """
    out = dict(d)
    for key in keys:
        value = out.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value) and os.path.exists(value):
            out[key] = os.path.abspath(value)
    return out


def connect(ray: Any, address: str) -> str:
    """Join the cluster at ``address`` (``--ray-address``), or a ConfigError that says the connection failed
    (not the phase the scan was in) and what usually fixes it.

    Args:
        ray: the ray module.
        address: the cluster's address, or ``auto``.

    Returns:
        The address joined (``auto`` resolved to the cluster's GCS address), or ``address`` when Ray does not say.
    """
    try:
        info = ray.init(address=address, log_to_driver=False)
    except ConnectionError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"could not connect to the Ray cluster at --ray-address {address}: {first}",
            fix="check the address and that the cluster runs (`ray status` on its head node); a cluster with token "
                "authentication (Ray 2.60 turns it on at `ray start --head` when RAY_AUTH_MODE=token is set or a token "
                "already exists in ~/.ray/auth_token) needs "
                "RAY_AUTH_MODE=token and the same token (~/.ray/auth_token, or RAY_AUTH_TOKEN) in this shell; "
                "docs/scale.md") from exc
    with contextlib.suppress(Exception):
        return str(info.address_info["gcs_address"])
    return address


def session_logs(ray: Any, node_id: str | None = None) -> str:
    """The Ray session's log folder (``--temp-dir`` moves it) on node ``node_id`` (a dead node too: Ray keeps it in
    ``ray.nodes()``), else on the first live node, else Ray's default path. Ray 2.x has no public call for the
    session folder; ``ray.nodes()`` names each node's raylet socket inside it (``<session>/sockets/raylet``).

    Args:
        ray: the ray module.
        node_id: the node whose folder is wanted (None: any live node's, the same path on a one-machine cluster).

    Returns:
        The folder's path on that node.
    """
    with contextlib.suppress(Exception):
        nodes = ray.nodes()
        mine = [n for n in nodes if node_id is not None and n.get("NodeID") == node_id]
        for node in mine or [n for n in nodes if n.get("Alive", True)]:
            sock = Path(str(node.get("RayletSocketName") or ""))
            if sock.parent.name == "sockets":
                return str(sock.parent.parent / "logs")
    return "/tmp/ray/session_latest/logs"


def lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's exceptions for a worker process or node that died (not an error raised by pairaudit's code)."""
    ex = ray.exceptions
    return ex.RayActorError, ex.WorkerCrashedError, ex.ObjectLostError, ex.NodeDiedError


def node_ips(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Each node's IP by node id, from ``ray.nodes()``."""
    return {n.get("NodeID"): n.get("NodeManagerAddress", "?") for n in nodes}


def node_line(actor_nodes: list[str], nodes: list[dict[str, Any]]) -> str:
    """The log line naming the nodes the actors run on, in the order of timings.json's ``ray_node:<k>:`` keys
    (sorted by node id): each one's IP, node id and actors.

    Args:
        actor_nodes: each actor's node id.
        nodes: ``ray.nodes()``.

    Returns:
        The line.
    """
    ips = node_ips(nodes)
    used = sorted(set(actor_nodes))
    parts = [f"ray_node:{k} = {ips.get(node, '?')} (node {node[:12]}, {_actors(actor_nodes.count(node))})"
             for k, node in enumerate(used)]
    return f"ray: {_actors(len(actor_nodes))} on {len(used)} node(s): " + "; ".join(parts)


def _actors(n: int) -> str:
    return f"{n} actor" + ("" if n == 1 else "s")
