package migration

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// platformMove starts the case's guest as a VMI, waits for its heartbeat,
// migrates it with a VirtualMachineInstanceMigration and deletes it.
func platformMove(ctx context.Context, cluster *framework.Cluster, ns string, c Case, seq int, timeout time.Duration) (m Move, err error) {
	m = Move{Side: Platform, Case: c}
	name := fmt.Sprintf("mig-%d", seq)
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)
	if _, err := vmis.Create(ctx, guestVMI(name, c), metav1.CreateOptions{}); err != nil {
		return m, err
	}
	defer func() {
		cctx := context.WithoutCancel(ctx)
		if derr := vmis.Delete(cctx, name, metav1.DeleteOptions{}); derr == nil {
			_ = cluster.WaitVMIGone(cctx, ns, name, 2*time.Minute)
		}
	}()
	vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		return m, err
	}
	source, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		return m, err
	}
	before, err := waitSettled(ctx, cluster.SerialLogPath(source), c, 3*time.Minute)
	if err != nil {
		return m, err
	}

	migs := cluster.Virt.VirtualizationV1().VirtualMachineInstanceMigrations(ns)
	w, err := migs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return m, err
	}
	defer w.Stop()
	start := time.Now()
	created, err := cluster.Migrate(ctx, ns, name)
	if err != nil {
		return m, err
	}
	ended, err := waitEnded(ctx, w, created.Name, timeout, func(phase string) {
		m.Phases = append(m.Phases, Phase{Phase: phase, At: time.Since(start)})
	})
	m.Total = time.Since(start)
	if err != nil {
		return m, err
	}
	if ended.Status.Phase != virtv1.MigrationSucceeded {
		return m, fmt.Errorf("migration %s ended %s: %s", created.Name, ended.Status.Phase, framework.MigrationFailure(ended))
	}
	ms := ended.Status.MigrationState
	if ms == nil || ms.DowntimeMilliseconds == 0 {
		// The VMI's copy is written by the same switch-over.
		if vmi, err = vmis.Get(ctx, name, metav1.GetOptions{}); err == nil {
			ms = vmi.Status.MigrationState
		}
	}
	if ms == nil || ms.DowntimeMilliseconds == 0 {
		return m, fmt.Errorf("migration %s succeeded without a downtime in its migration state", created.Name)
	}
	m.Downtime = time.Duration(ms.DowntimeMilliseconds) * time.Millisecond
	m.Mode = string(ms.Mode)
	m.Paused = ms.Mode == virtv1.MigrationPaused
	target, err := cluster.Kube.CoreV1().Pods(ns).Get(ctx, ms.TargetPod, metav1.GetOptions{})
	if err != nil {
		return m, fmt.Errorf("target pod: %w", err)
	}
	if _, err := waitTick(ctx, cluster.SerialLogPath(target), before, 30*time.Second); err != nil {
		return m, fmt.Errorf("the guest at the target: %w", err)
	}
	m.TicksAfter = true
	return m, nil
}

// waitEnded reads the migrations' watch until name is Succeeded or Failed,
// and calls seen with each phase the first time it shows.
func waitEnded(ctx context.Context, w watch.Interface, name string, timeout time.Duration, seen func(phase string)) (*virtv1.VirtualMachineInstanceMigration, error) {
	deadline := time.After(timeout)
	last := virtv1.VirtualMachineInstanceMigrationPhase("-")
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline:
			return nil, fmt.Errorf("migration %s did not end within %s", name, timeout)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the migrations' watch ended before %s did", name)
			}
			mig, isMig := ev.Object.(*virtv1.VirtualMachineInstanceMigration)
			if !isMig || mig.Name != name {
				continue
			}
			if ev.Type == watch.Deleted {
				return nil, fmt.Errorf("migration %s deleted before it ended", name)
			}
			if p := mig.Status.Phase; p != last {
				last = p
				if p == "" {
					p = "(none)"
				}
				seen(string(p))
			}
			if mig.Status.Phase.Final() {
				return mig, nil
			}
		}
	}
}
