package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"libvirt.org/go/libvirtxml"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// libvirt's test driver cannot migrate: these tests drive a target through
// the lifecycle events an incoming migration brings (test/integration
// migrates real guests), and check what a source refuses.

func target(c *Config) { c.MigrationTarget = true }

func (f *fixture) send(t *testing.T, typ, detail string) {
	t.Helper()
	select {
	case f.events <- hypervisor.Event{Domain: f.sup.Name(), Type: typ, Detail: detail}:
	case <-time.After(10 * time.Second):
		t.Fatalf("event %s/%s not taken", typ, detail)
	}
}

func (f *fixture) waitMigration(t *testing.T, state apiv1.MigrationState) *apiv1.Domain {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := f.sup.Domain()
		if d.GetMigration().GetState() == state {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("migration did not reach %v; domain %v", state, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTargetIsPreparedAndAdoptsTheIncomingGuest(t *testing.T) {
	f := newFixture(t, target)
	if _, err := f.start(t); !errors.Is(err, ErrPrecondition) {
		t.Fatalf("Start on a migration target = %v, want ErrPrecondition: it must never boot a guest of its own", err)
	}
	_, events, stop := f.sup.Watch()
	defer stop()
	prepared := false
	d, err := f.sup.PrepareTarget(t.Context(), f.vmi, "m1", func() error { prepared = true; return nil })
	if err != nil {
		t.Fatalf("PrepareTarget: %v", err)
	}
	if !prepared || d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || d.GetMigration().GetState() != apiv1.MigrationState_MIGRATION_STATE_PREPARED ||
		d.GetMigration().GetRole() != RoleTarget || d.GetMigration().GetMigrationUid() != "m1" {
		t.Fatalf("after PrepareTarget (prepare step ran %v): %v; want ABSENT, migration m1 PREPARED as target", prepared, d)
	}
	if ev := next(t, events, apiv1.EventType_EVENT_TYPE_MIGRATION); ev.Detail != "prepared" {
		t.Errorf("migration event %q, want prepared", ev.Detail)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "disks", "scratch", "disk.img")); err != nil {
		t.Errorf("the empty disk the incoming domain needs was not made: %v", err)
	}
	if _, err := f.sup.PrepareTarget(t.Context(), f.vmi, "m1", nil); err != nil {
		t.Errorf("PrepareTarget again: %v", err)
	}

	// The incoming domain appears (libvirt's Prepare) and fails: the
	// migration failed, the guest did not end, nothing of this launcher's
	// started.
	f.send(t, "started", "migrated")
	f.waitMigration(t, apiv1.MigrationState_MIGRATION_STATE_RUNNING)
	f.send(t, "stopped", "failed")
	d = f.waitMigration(t, apiv1.MigrationState_MIGRATION_STATE_FAILED)
	if f.sup.Final() != nil || f.sup.Started() || d.GetMigration().GetFailureReason() == "" {
		t.Fatalf("after a failed incoming migration: final %v, started %v, domain %v; want no end, not started, a reason", f.sup.Final(), f.sup.Started(), d)
	}

	// A second migration arrives and completes.
	if _, err := f.sup.PrepareTarget(t.Context(), f.vmi, "m2", nil); err != nil {
		t.Fatalf("PrepareTarget m2: %v", err)
	}
	f.send(t, "started", "migrated")
	f.waitMigration(t, apiv1.MigrationState_MIGRATION_STATE_RUNNING)
	// What libvirt's incoming migration defines and runs.
	define(t, f)
	f.send(t, "resumed", "migrated")
	d = f.waitMigration(t, apiv1.MigrationState_MIGRATION_STATE_COMPLETED)
	if d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING || d.GetMigration().GetMigrationUid() != "m2" || d.GetMigration().GetEndTimeUnixNano() == 0 || !f.sup.Started() {
		t.Fatalf("after the switch-over: %v; want RUNNING with migration m2 COMPLETED", d)
	}
	// From now on it is this launcher's guest: Sync finds it running.
	if d, err := f.start(t); err != nil || d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Errorf("Sync after the guest arrived: %v, %v", d, err)
	}
	if err := f.sup.CancelMigration(t.Context(), "m2"); !errors.Is(err, ErrPrecondition) {
		t.Errorf("CancelMigration at the target = %v, want ErrPrecondition (cancel at the source)", err)
	}
}

// define defines (and starts) the fixture's domain as libvirt would.
func define(t *testing.T, f *fixture) {
	t.Helper()
	if err := f.sup.define(f.vmi, f.nics()); err != nil {
		t.Fatal(err)
	}
	if err := f.sup.conn.Start(f.sup.Name()); err != nil {
		t.Fatal(err)
	}
}

func TestSourceRefusals(t *testing.T) {
	f := newFixture(t)
	req := MigrateRequest{UID: "m", DestURI: "qemu+unix:///session?socket=/nonexistent"}
	if err := f.sup.Migrate(t.Context(), req); !errors.Is(err, ErrPrecondition) {
		t.Errorf("Migrate before the start = %v, want ErrPrecondition", err)
	}
	if _, err := f.sup.PrepareTarget(t.Context(), f.vmi, "m", nil); !errors.Is(err, ErrPrecondition) {
		t.Errorf("PrepareTarget on a launcher that is no target = %v, want ErrPrecondition", err)
	}
	if err := f.sup.CancelMigration(t.Context(), "m"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CancelMigration of no migration = %v, want ErrNotFound", err)
	}
}

func TestLocalWritableDisks(t *testing.T) {
	dir := t.TempDir()
	disks := filepath.Join(dir, "disks")
	overlay := filepath.Join(disks, "root", "disk.img")
	empty := filepath.Join(disks, "scratch", "disk.img")
	for _, p := range []string{overlay, empty} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, make([]byte, 1024), 0o644)
	}
	file := func(p string) *libvirtxml.DomainDiskSource {
		return &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: p}}
	}
	x := &libvirtxml.Domain{Devices: &libvirtxml.DomainDeviceList{Disks: []libvirtxml.DomainDisk{
		{Device: "disk", Source: file(overlay), Target: &libvirtxml.DomainDiskTarget{Dev: "vda"}},
		{Device: "disk", Source: file(empty), Target: &libvirtxml.DomainDiskTarget{Dev: "vdb"}},
		// A claim: shared storage (or not migratable), never copied.
		{Device: "disk", Source: file(filepath.Join(dir, "pvcs", "data", "disk.img")), Target: &libvirtxml.DomainDiskTarget{Dev: "vdc"}},
		// Read-only disks and CD-ROMs are made anew by the target.
		{Device: "cdrom", Source: file(filepath.Join(disks, "cloudinit", "nocloud.iso")), Target: &libvirtxml.DomainDiskTarget{Dev: "sda"}},
		{Device: "disk", ReadOnly: &libvirtxml.DomainDiskReadOnly{}, Source: file(filepath.Join(disks, "cfg", "config.iso")), Target: &libvirtxml.DomainDiskTarget{Dev: "vdd"}},
		// A prefix that is not the directory.
		{Device: "disk", Source: file(disks + "-other/x/disk.img"), Target: &libvirtxml.DomainDiskTarget{Dev: "vde"}},
		// A block device.
		{Device: "disk", Source: &libvirtxml.DomainDiskSource{Block: &libvirtxml.DomainDiskSourceBlock{Dev: "/dev/virt-pvcs/b"}}, Target: &libvirtxml.DomainDiskTarget{Dev: "vdf"}},
	}}}
	s := &Supervisor{}
	s.cfg.Disks.Disks = disks
	got, size := s.localWritableDisks(x)
	if !slices.Equal(got, []string{"vda", "vdb"}) || size != 2048 {
		t.Errorf("localWritableDisks = %v, %d bytes; want [vda vdb], 2048", got, size)
	}
}

func TestMigrationUnits(t *testing.T) {
	for _, c := range []struct{ bps, mib uint64 }{{0, 0}, {1, 1}, {1 << 20, 1}, {1<<20 + 1, 2}, {100 << 20, 100}} {
		if got := mibPerSecond(c.bps); got != c.mib {
			t.Errorf("mibPerSecond(%d) = %d, want %d", c.bps, got, c.mib)
		}
	}
	for _, c := range []struct {
		unit string
		val  uint
		want uint64
	}{{"KiB", 131072, 128 << 20}, {"", 1024, 1 << 20}, {"MiB", 64, 64 << 20}, {"GiB", 2, 2 << 30}, {"bytes", 5, 5}} {
		if got := memoryBytes(&libvirtxml.Domain{Memory: &libvirtxml.DomainMemory{Value: c.val, Unit: c.unit}}); got != c.want {
			t.Errorf("memoryBytes(%d %s) = %d, want %d", c.val, c.unit, got, c.want)
		}
	}
	agent := func(state string) *libvirtxml.Domain {
		return &libvirtxml.Domain{Devices: &libvirtxml.DomainDeviceList{Channels: []libvirtxml.DomainChannel{
			{Target: &libvirtxml.DomainChannelTarget{VirtIO: &libvirtxml.DomainChannelTargetVirtIO{Name: "org.qemu.guest_agent.0", State: state}}},
		}}}
	}
	if !agentConnected(agent("connected")) || agentConnected(agent("disconnected")) || agentConnected(&libvirtxml.Domain{}) {
		t.Errorf("agentConnected does not follow the channel's state")
	}
}
