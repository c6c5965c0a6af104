"""GPU actors on a real Ray cluster: a node that declares a GPU (Ray resources are logical, so this runs on
a machine without one) gets the model-stage actors, each with its fraction of the GPU; Ray hands each
actor that GPU (``CUDA_VISIBLE_DEVICES``), where the embedder / reference model would then run."""

from __future__ import annotations

import os

import pytest

from pairaudit.engines.ray_cluster import actor_plan

ray = pytest.importorskip("ray", reason="install pairaudit[ray]")


def test_model_stage_actors_share_the_gpu_node() -> None:
    from ray.cluster_utils import Cluster

    class Probe:  # defined here, so Ray ships it by value to the workers
        def where(self) -> tuple[str, list, str | None]:
            return (ray.get_runtime_context().get_node_id(), [str(g) for g in ray.get_gpu_ids()],
                    os.environ.get("CUDA_VISIBLE_DEVICES"))

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 80 * 2**20,
                                                      "include_dashboard": False})
    gpu_node = c.add_node(num_cpus=2, num_gpus=1, object_store_memory=80 * 2**20)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, configure_logging=False)
    try:
        n, opts = actor_plan(ray.nodes(), None, True)  # a model stage (near duplicates) runs
        assert n == 2 and opts["num_gpus"] == 0.5
        actors = [ray.remote(Probe).options(**opts).remote() for _ in range(n)]
        seen = ray.get([a.where.remote() for a in actors], timeout=60)
        assert {node for node, _, _ in seen} == {gpu_node.node_id}
        assert all(ids == ["0"] and cuda == "0" for _, ids, cuda in seen)
        n_cpu, cpu_opts = actor_plan(ray.nodes(), None, False)  # no model stage: every CPU, no GPU
        assert n_cpu == 3 and "num_gpus" not in cpu_opts
    finally:
        ray.shutdown()
        c.shutdown()
