package server

import (
	"context"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/launcher/supervisor"
)

// What InfoResponse.features names.
const (
	FeatureMigrationSource = "migration-source"
	FeatureMigrationTarget = "migration-target"
)

// Features are what this launcher can do beyond Sync and the lifecycle
// RPCs: every launcher can send its guest away; only a target (a private
// libvirtd) can receive one.
func Features(migrationTarget bool) []string {
	f := []string{FeatureMigrationSource}
	if migrationTarget {
		f = append(f, FeatureMigrationTarget)
	}
	return f
}

// PrepareMigrationTarget readies a target launcher for the incoming guest:
// the migration directory, the leases the source's guest holds and the
// volumes' files; the domain itself comes with the migration.
func (s *Server) PrepareMigrationTarget(ctx context.Context, req *apiv1.PrepareMigrationTargetRequest) (*apiv1.PrepareMigrationTargetResponse, error) {
	if !s.cfg.MigrationTarget {
		return nil, status.Error(codes.FailedPrecondition, "this launcher is not a migration target (started without --migration-target)")
	}
	if req.GetMigrationUid() == "" {
		return nil, status.Error(codes.InvalidArgument, "migration_uid is required")
	}
	vmi, err := s.vmi(req.GetVmiJson())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(layout.MigrationDir(s.cfg.PrivateDir), 0o700); err != nil {
		return nil, status.Errorf(codes.Internal, "create the migration directory: %v", err)
	}
	s.creds.SetVMI(vmi)
	if _, err := s.domain.PrepareTarget(ctx, vmi, req.GetMigrationUid(), s.serveLeases(ctx, vmi, req.GetInterfaces())); err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.PrepareMigrationTargetResponse{}, nil
}

// Migrate starts the live migration of the domain to the target the node
// forwards from this pod's migration sockets.
func (s *Server) Migrate(ctx context.Context, req *apiv1.MigrateRequest) (*apiv1.MigrateResponse, error) {
	if req.GetMigrationUid() == "" {
		return nil, status.Error(codes.InvalidArgument, "migration_uid is required")
	}
	priv := s.cfg.PrivateDir
	err := s.domain.Migrate(ctx, supervisor.MigrateRequest{
		UID:     req.GetMigrationUid(),
		DestURI: hypervisor.DaemonURI(layout.MigrationLibvirtSocket(priv)),
		// The same path in both pods: the target's QEMU listens there,
		// this pod's QEMU connects to the node's proxy there.
		MigrateURI:              "unix://" + layout.MigrationQEMUSocket(priv),
		DisksURI:                "unix://" + layout.MigrationBlockSocket(priv),
		BandwidthBytesPerSecond: req.GetBandwidthBytesPerSecond(),
		CompletionTimeoutPerGiB: time.Duration(req.GetCompletionTimeoutPerGibSeconds()) * time.Second,
		ProgressTimeout:         time.Duration(req.GetProgressTimeoutSeconds()) * time.Second,
		AllowAutoConverge:       req.GetAllowAutoConverge(),
		AllowPostCopy:           req.GetAllowPostCopy(),
		MaxDowntime:             time.Duration(req.GetMaxDowntimeMs()) * time.Millisecond,
	})
	if err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.MigrateResponse{}, nil
}

// CancelMigration aborts the running migration of that UID.
func (s *Server) CancelMigration(ctx context.Context, req *apiv1.CancelMigrationRequest) (*apiv1.CancelMigrationResponse, error) {
	if err := s.domain.CancelMigration(ctx, req.GetMigrationUid()); err != nil {
		return nil, grpcError(err)
	}
	return &apiv1.CancelMigrationResponse{}, nil
}
