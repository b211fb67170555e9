"""How the features model's rules reach the controller and migration models: the controller's registration refuses
a broker whose metadata.version range excludes the finalized level (the rule shared with the features model), and
the migration's quorum trigger reads the finalized metadata.version (IBP_3_4_IV0 is the minimum)."""

from __future__ import annotations

import attrs

from kraftcheck.model.controller.brokers import UNSUPPORTED_VERSION, handle_registration
from kraftcheck.model.controller.image import image_of
from kraftcheck.model.controller.state import FINALIZED_MV, K_REGISTER, supported_mv
from kraftcheck.model.controller.state import Bounds as CBounds
from kraftcheck.model.migration import MIGRATION
from kraftcheck.model.migration.driver import check_quorum
from kraftcheck.model.migration.kraft import kraft_elect
from kraftcheck.model.migration.state import (
    MIGRATION_MIN_MV_LEVEL,
    OLD_MV_LEVEL,
    WAIT_FOR_BROKERS,
    WAIT_FOR_CONTROLLER_QUORUM,
    finalized_mv,
)


def test_controller_registration_checks_the_metadata_version_range() -> None:
    b = CBounds(old_brokers=1)
    assert supported_mv(b, 0) == (1, FINALIZED_MV - 1) and supported_mv(b, 1) == (1, FINALIZED_MV)
    img = image_of((), 2, 1)
    assert handle_registration(img, 0, 1, supported_mv(b, 0)) == (None, UNSUPPORTED_VERSION)
    records, kind = handle_registration(img, 1, 1, supported_mv(b, 1))
    assert kind == K_REGISTER and records is not None
    assert handle_registration(img, 0, 1, supported_mv(b, 0), check_features=False)[1] == K_REGISTER
    # the default bounds have no old broker: every registration is checked and passes, as before
    assert all(supported_mv(CBounds(), x) == (1, FINALIZED_MV) for x in range(CBounds().brokers))


def _waiting_leader(old_mv: bool) -> object:
    ctx = MIGRATION.context(MIGRATION.make_bounds({"old_metadata_version": old_mv}))
    s = MIGRATION.initial_states(ctx)[0]
    s = next(t for v, t in kraft_elect(s, ctx) if v == (0,))
    s = attrs.evolve(s, ctrls=(attrs.evolve(s.ctrls[0], driver=WAIT_FOR_CONTROLLER_QUORUM),) + s.ctrls[1:])
    return ctx, s


def test_migration_trigger_reads_the_finalized_metadata_version() -> None:
    ctx, s = _waiting_leader(old_mv=False)
    assert finalized_mv(ctx.b, s.log) == MIGRATION_MIN_MV_LEVEL
    assert [t.ctrls[0].driver for _v, t in check_quorum(s, ctx)] == [WAIT_FOR_BROKERS]
    ctx, s = _waiting_leader(old_mv=True)
    assert finalized_mv(ctx.b, s.log) == OLD_MV_LEVEL
    assert list(check_quorum(s, ctx)) == []  # 'The metadata.version too low'
    # a FeatureLevelRecord for metadata.version in the log is what the trigger reads
    upgraded = attrs.evolve(s, log=((s.kepoch, "feat", MIGRATION_MIN_MV_LEVEL),))
    assert [t.ctrls[0].driver for _v, t in check_quorum(upgraded, ctx)] == [WAIT_FOR_BROKERS]
    below = MIGRATION.context(ctx.b, ["migration-below-mv"])
    assert [t.ctrls[0].driver for _v, t in check_quorum(s, below)] == [WAIT_FOR_BROKERS]
