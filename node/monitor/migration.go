package monitor

import (
	"context"
	"encoding/json"
	"fmt"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// PrepareMigrationTarget readies a target launcher (started with
// --migration-target) for vmi's guest, its NICs as the bindings prepared
// them in the target pod, for the migration of that UID.
func (l *Launcher) PrepareMigrationTarget(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nics []*apiv1.InterfaceNetwork, migrationUID string) error {
	vmi = vmi.DeepCopy()
	vmi.APIVersion, vmi.Kind = virtv1.SchemeGroupVersion.String(), "VirtualMachineInstance"
	data, err := json.Marshal(vmi)
	if err != nil {
		return fmt.Errorf("marshal VMI: %w", err)
	}
	err = l.call(ctx, l.cfg.SyncTimeout, func(ctx context.Context) error {
		_, err := l.client.PrepareMigrationTarget(ctx, &apiv1.PrepareMigrationTargetRequest{VmiJson: data, Interfaces: nics, MigrationUid: migrationUID})
		return err
	})
	if err != nil {
		return fmt.Errorf("prepare the migration target: %w", err)
	}
	return nil
}

// Migrate starts the live migration req describes; its progress arrives
// through the watch (Domain.migration).
func (l *Launcher) Migrate(ctx context.Context, req *apiv1.MigrateRequest) error {
	err := l.call(ctx, l.cfg.SyncTimeout, func(ctx context.Context) error {
		_, err := l.client.Migrate(ctx, req)
		return err
	})
	if err != nil {
		return fmt.Errorf("start the migration: %w", err)
	}
	return nil
}

// CancelMigration aborts the running migration of that UID.
func (l *Launcher) CancelMigration(ctx context.Context, migrationUID string) error {
	err := l.call(ctx, l.cfg.CallTimeout, func(ctx context.Context) error {
		_, err := l.client.CancelMigration(ctx, &apiv1.CancelMigrationRequest{MigrationUid: migrationUID})
		return err
	})
	if err != nil {
		return fmt.Errorf("cancel the migration: %w", err)
	}
	return nil
}
