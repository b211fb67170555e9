

def test_metric_is_the_active_controllers_own() -> None:
    """1e158f53ea: a metric that reads another controller's driver shows MigrateZkData while the active one is not
    copying."""
    from kraftcheck.model.migration.driver import metric_state
    from kraftcheck.spec.migration_shape import metric_copying

    metric = SPEC.property_named("MetricReflectsActiveController")
    assert metric is not None
    s = step(step(to_claim(), "claim", c=0), "copy_begin", c=0)
    assert metric_state(s) == "MigrateZkData" and metric_copying(s, CTX) and metric.pred(s, CTX)
    # the same cluster seen with the copier's and the other controller's records swapped: the active controller (0)
    # no longer copies, so the metric must not read MigrateZkData; a metric reading controller 1 would
    swapped = attrs.evolve(s, ctrls=(attrs.evolve(s.ctrls[1], epoch=s.kepoch), s.ctrls[0]))
    assert metric_state(swapped) != "MigrateZkData" and metric.pred(swapped, CTX)
    wrong = attrs.evolve(s, ctrls=(attrs.evolve(s.ctrls[0], driver=INACTIVE, zk=None, copy=0), s.ctrls[1]))
    assert metric_state(wrong) != "MigrateZkData" and metric.pred(wrong, CTX)
