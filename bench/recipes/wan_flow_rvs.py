"""Wan 2.1 FlowRVS (14B T2V layout): the synthetic-checkpoint recipe ``wan_flow_rvs`` (a tool). The adapter and
warm-up facts it reads are ``bcg_runtime/comfy/models/wan_flow_rvs.py``'s, which never imports this."""

from bcg_runtime.comfy.models.wan_flow_rvs import ADAPTER

from .wan import variant_recipe

RECIPE = variant_recipe(
    ADAPTER,
    "wan_flow_rvs",
    "Wan 2.1 FlowRVS (14B T2V layout)",
    "WAN21_FlowRVS",
    "WAN21_FlowRVS",
    {"model_type": "flow_rvs"},
    metadata_keys=("model_type",),
    built_with={"model_type": "t2v"},
)
