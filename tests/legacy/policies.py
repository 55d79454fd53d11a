"""Upstream's TestCompatibility_v1_Scheduler inputs (kube-scheduler 1.20/1.21), one Policy per release."""

PREDS_1_2 = """
    {"name": "MatchNodeSelector"}, {"name": "PodFitsResources"}, {"name": "PodFitsHostPorts"}, {"name": "HostName"},
    {"name": "NoDiskConflict"}, {"name": "NoVolumeZoneConflict"}"""
CUSTOM_PREDS = """
    {"name": "TestServiceAffinity", "argument": {"serviceAffinity" : {"labels" : ["region"]}}},
    {"name": "TestLabelsPresence",  "argument": {"labelsPresence"  : {"labels" : ["foo"], "presence":true}}}"""
PRIOS_1_4 = """
    {"name": "EqualPriority", "weight": 2}, {"name": "ImageLocalityPriority", "weight": 2},
    {"name": "LeastRequestedPriority", "weight": 2}, {"name": "BalancedResourceAllocation", "weight": 2},
    {"name": "SelectorSpreadPriority", "weight": 2}, {"name": "NodePreferAvoidPodsPriority", "weight": 2},
    {"name": "NodeAffinityPriority", "weight": 2}, {"name": "TaintTolerationPriority", "weight": 2},
    {"name": "InterPodAffinityPriority", "weight": 2}, {"name": "MostRequestedPriority", "weight": 2}"""
RTCR = """,
    {"name": "RequestedToCapacityRatioPriority", "weight": 2, "argument": {"requestedToCapacityRatioArguments": {
      "shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 7}]%s}}}"""
EXTENDER_1_7 = """{"urlPrefix": "/prefix", "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 1,
    "%s": "bind", "enableHttps": true, "tlsConfig": {"Insecure":true}, "httpTimeout": 1, "nodeCacheCapable": true%s}"""
MANAGED = """, "managedResources": [{"name":"example.com/foo","ignoredByScheduler":true}], "ignorable":true"""


def policy(predicates: str, priorities: str, extenders: str = "") -> str:
    ext = f', "extenders": [{extenders}]' if extenders else ""
    return f'{{"kind": "Policy", "apiVersion": "v1", "predicates": [{predicates}], "priorities": [{priorities}]{ext}}}'


V1_0 = policy(
    """{"name": "MatchNodeSelector"}, {"name": "PodFitsResources"}, {"name": "PodFitsPorts"},
    {"name": "NoDiskConflict"},"""
    + CUSTOM_PREDS,
    """{"name": "LeastRequestedPriority", "weight": 1}, {"name": "ServiceSpreadingPriority", "weight": 2},
    {"name": "TestServiceAntiAffinity", "weight": 3, "argument": {"serviceAntiAffinity": {"label": "zone"}}},
    {"name": "TestLabelPreference", "weight": 4, "argument": {"labelPreference": {"label": "bar", "presence":true}}}""",
)
V1_1 = policy(
    """{"name": "MatchNodeSelector"}, {"name": "PodFitsHostPorts"}, {"name": "PodFitsResources"},
    {"name": "NoDiskConflict"}, {"name": "HostName"},"""
    + CUSTOM_PREDS,
    """{"name": "EqualPriority", "weight": 2}, {"name": "LeastRequestedPriority", "weight": 2},
    {"name": "BalancedResourceAllocation", "weight": 2}, {"name": "SelectorSpreadPriority", "weight": 2},
    {"name": "TestServiceAntiAffinity1", "weight": 3, "argument": {"serviceAntiAffinity": {"label": "zone"}}},
    {"name": "TestServiceAntiAffinity2", "weight": 3, "argument": {"serviceAntiAffinity": {"label": "region"}}},
    {"name": "TestLabelPreference1", "weight": 4, "argument": {"labelPreference": {"label": "bar", "presence":true}}},
    {"name": "TestLabelPreference2", "weight": 4,
     "argument": {"labelPreference": {"label": "foo", "presence":false}}}""",
)
V1_2 = policy(
    PREDS_1_2
    + """, {"name": "MaxEBSVolumeCount"}, {"name": "MaxGCEPDVolumeCount"},
    {"name": "MaxAzureDiskVolumeCount"},"""
    + CUSTOM_PREDS,
    """{"name": "EqualPriority", "weight": 2}, {"name": "NodeAffinityPriority", "weight": 2},
    {"name": "ImageLocalityPriority", "weight": 2}, {"name": "LeastRequestedPriority", "weight": 2},
    {"name": "BalancedResourceAllocation", "weight": 2}, {"name": "SelectorSpreadPriority", "weight": 2},
    {"name": "TestServiceAntiAffinity", "weight": 3, "argument": {"serviceAntiAffinity": {"label": "zone"}}},
    {"name": "TestLabelPreference", "weight": 4, "argument": {"labelPreference": {"label": "bar", "presence":true}}}""",
)
PREDS_1_4 = (
    PREDS_1_2
    + """, {"name": "PodToleratesNodeTaints"}, {"name": "MaxEBSVolumeCount"},
    {"name": "MaxGCEPDVolumeCount"}, {"name": "MaxAzureDiskVolumeCount"}, {"name": "MatchInterPodAffinity"},"""
)
V1_4 = policy(PREDS_1_4 + CUSTOM_PREDS, PRIOS_1_4)
V1_7 = policy(PREDS_1_4 + CUSTOM_PREDS, PRIOS_1_4, EXTENDER_1_7 % ("BindVerb", ""))
V1_10 = policy(
    PREDS_1_4 + """{"name": "CheckVolumeBinding"},""" + CUSTOM_PREDS, PRIOS_1_4, EXTENDER_1_7 % ("bindVerb", MANAGED)
)
PREDS_1_12 = PREDS_1_4 + """{"name": "MaxCSIVolumeCountPred"}, {"name": "CheckVolumeBinding"},"""
V1_12 = policy(PREDS_1_12 + CUSTOM_PREDS, PRIOS_1_4 + RTCR % "", EXTENDER_1_7 % ("bindVerb", MANAGED))
V1_16 = policy(
    PREDS_1_12 + """{"name": "MaxCinderVolumeCount"},""" + CUSTOM_PREDS,
    PRIOS_1_4
    + RTCR % ', "resources": [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}]',
    EXTENDER_1_7 % ("bindVerb", MANAGED),
)
