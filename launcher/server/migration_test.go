package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// The test driver cannot migrate (test/integration/launcher migrates real
// guests): these tests check the façade's contract codes and what a target
// reports before its guest arrives.

func TestFeatures(t *testing.T) {
	if f := Features(false); !slices.Equal(f, []string{"migration-source"}) {
		t.Errorf("Features(false) = %v", f)
	}
	if f := Features(true); !slices.Equal(f, []string{"migration-source", "migration-target"}) {
		t.Errorf("Features(true) = %v", f)
	}
}

func TestPrepareMigrationTarget(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MigrationTarget = true; c.PrivateDir = filepath.Join(t.TempDir(), "p") })
	b, _ := json.Marshal(f.vmi)
	if _, err := f.client.PrepareMigrationTarget(t.Context(), &apiv1.PrepareMigrationTargetRequest{VmiJson: b}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("PrepareMigrationTarget without a migration UID = %v, want InvalidArgument", err)
	}
	other := f.vmi.DeepCopy()
	other.UID = "another"
	ob, _ := json.Marshal(other)
	if _, err := f.client.PrepareMigrationTarget(t.Context(), &apiv1.PrepareMigrationTargetRequest{VmiJson: ob, MigrationUid: "m"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("PrepareMigrationTarget of another VMI = %v, want InvalidArgument", err)
	}
	if _, err := f.sync(t); status.Code(err) != codes.FailedPrecondition || !apiv1.SyncErrorIsPermanent(err) {
		t.Errorf("Sync on a target = %v, want FailedPrecondition", err)
	}
	if _, err := f.client.PrepareMigrationTarget(t.Context(), &apiv1.PrepareMigrationTargetRequest{VmiJson: b, MigrationUid: "m", Interfaces: nics(f.vmi)}); err != nil {
		t.Fatalf("PrepareMigrationTarget: %v", err)
	}
	if st, err := os.Stat(layout.MigrationDir(f.srv.cfg.PrivateDir)); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("migration directory: %v, %v; want a directory of mode 0700", st, err)
	}
	d := f.state(t)
	if d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || d.GetMigration().GetState() != apiv1.MigrationState_MIGRATION_STATE_PREPARED {
		t.Errorf("target before its guest arrived: %v; want ABSENT, migration PREPARED", d)
	}
	if _, err := f.client.CancelMigration(t.Context(), &apiv1.CancelMigrationRequest{MigrationUid: "m"}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("CancelMigration at a target = %v, want FailedPrecondition", err)
	}
}

func TestMigrationCodesOfASource(t *testing.T) {
	f := newFixture(t)
	b, _ := json.Marshal(f.vmi)
	if _, err := f.client.PrepareMigrationTarget(t.Context(), &apiv1.PrepareMigrationTargetRequest{VmiJson: b, MigrationUid: "m"}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("PrepareMigrationTarget on a launcher without --migration-target = %v, want FailedPrecondition", err)
	}
	if _, err := f.client.Migrate(t.Context(), &apiv1.MigrateRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Migrate without a UID = %v, want InvalidArgument", err)
	}
	if _, err := f.client.Migrate(t.Context(), &apiv1.MigrateRequest{MigrationUid: "m"}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Migrate before the domain runs = %v, want FailedPrecondition", err)
	}
	if _, err := f.client.CancelMigration(t.Context(), &apiv1.CancelMigrationRequest{MigrationUid: "m"}); status.Code(err) != codes.NotFound {
		t.Errorf("CancelMigration of no migration = %v, want NotFound", err)
	}
}
