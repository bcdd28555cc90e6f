package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// maxHeartbeatGap is the longest pause of the guest's heartbeat (printed
// every 100 ms) a live migration may cause, as the host sees it (issue 26).
const maxHeartbeatGap = 2 * time.Second

// tickingVMI is the small test guest named name, which prints its name in
// its marker and page and a numbered heartbeat on its serial console.
func tickingVMI(t *testing.T, name string) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name = name
	vmi.Labels = map[string]string{"app": name}
	kb := vmi.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "virt.hostname=vmi-tiny", "virt.hostname="+name) + " virt.tick=1"
	return vmi
}

// startTicking creates tickingVMI(name) in ns, waits until its guest runs
// and its heartbeat shows, and returns the VMI, its launcher pod's name and
// the heartbeat.
func startTicking(ctx context.Context, t *testing.T, ns, name string) (*virtv1.VirtualMachineInstance, *framework.Ticks) {
	t.Helper()
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, tickingVMI(t, name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	ticks := cluster.FollowTicks(t, vmi)
	if _, err := ticks.WaitPast(ctx, 0, "", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return vmi, ticks
}

// TestLiveMigration: a running guest moves to a new launcher pod on the same
// node (a single-node cluster allows it: --migration-same-node=IfOnlyNode)
// through the whole path a move between nodes takes (target pod, the
// handlers' mutual-TLS proxies, libvirt's peer-to-peer job). The migration
// passes through its phases in order to Succeeded; the VMI names the new
// pod, its migration state says completed with a downtime; the heartbeat
// the guest prints every 100 ms goes on in the new pod's serial log with no
// number lost or repeated and no pause above 2 s; the old pod and its QEMU
// are gone; the guest's page answers at the new pod's address.
func TestLiveMigration(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vmi, ticks := startTicking(ctx, t, ns, "migrating")
	source, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	page := "VIRT-GUEST-HTTP " + vmi.Name
	if _, err := framework.WaitHTTP(ctx, "http://"+source.Status.PodIP+"/", page, time.Minute); err != nil {
		t.Fatalf("the guest's page before the move: %v", err)
	}
	qemus, err := framework.QEMUProcesses(vmi)
	if err != nil || len(qemus) != 1 {
		t.Fatalf("QEMU processes of the guest before the move: %v (%v), want one", qemus, err)
	}
	before := ticks.Last()

	start := time.Now()
	m, err := cluster.Migrate(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	ended, err := cluster.WaitMigrationEnded(ctx, ns, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if ended.Status.Phase != virtv1.MigrationSucceeded {
		t.Fatalf("migration %s ended %s: %s", m.Name, ended.Status.Phase, framework.MigrationFailure(ended))
	}
	want := []virtv1.VirtualMachineInstanceMigrationPhase{virtv1.MigrationPending, virtv1.MigrationScheduling,
		virtv1.MigrationScheduled, virtv1.MigrationPreparingTarget, virtv1.MigrationTargetReady,
		virtv1.MigrationRunning, virtv1.MigrationSucceeded}
	var phases []virtv1.VirtualMachineInstanceMigrationPhase
	for _, p := range ended.Status.PhaseTransitionTimestamps {
		phases = append(phases, p.Phase)
	}
	if !slices.Equal(phases, want) {
		t.Errorf("phase transitions %v, want %v", phases, want)
	}

	moved, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vmi.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ms := moved.Status.MigrationState
	switch {
	case ms == nil:
		t.Fatalf("the VMI has no migration state after the move: %+v", moved.Status)
	case !ms.Completed || ms.Failed || ms.MigrationUID != m.UID:
		t.Errorf("migration state completed=%v failed=%v uid=%s, want completed of %s", ms.Completed, ms.Failed, ms.MigrationUID, m.UID)
	case ms.SourcePod != source.Name || ms.TargetPod == "" || ms.TargetPod == source.Name:
		t.Errorf("migration state source pod %q target pod %q, want source %q and another target", ms.SourcePod, ms.TargetPod, source.Name)
	case moved.Status.NodeName != ms.TargetNode:
		t.Errorf("VMI on node %q after the move, its target was %q", moved.Status.NodeName, ms.TargetNode)
	case moved.Status.Phase != virtv1.Running:
		t.Errorf("VMI %s after the move, want Running", moved.Status.Phase)
	}
	if ms != nil {
		t.Logf("migrated in %s (object to Succeeded), downtime %d ms by libvirt's statistics", took.Round(10*time.Millisecond), ms.DowntimeMilliseconds)
	}
	if t.Failed() {
		return
	}
	target, err := cluster.Kube.CoreV1().Pods(ns).Get(ctx, ms.TargetPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The heartbeat goes on in the target's serial log: no line lost or
	// repeated, no long pause.
	after, err := ticks.WaitPast(ctx, before.N, target.Name, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ticks.WaitPast(ctx, after.N+10, target.Name, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	longest, switched, err := ticks.Continuity(before.N, after.N+10)
	if err != nil {
		t.Error(err)
	}
	t.Logf("heartbeat %d..%d: longest pause %s; last on %s: %d, first on %s: %d (%s apart)", before.N, after.N+10,
		longest.Round(time.Millisecond), switched[0].Pod, switched[0].N, switched[1].Pod, switched[1].N, switched[1].At.Sub(switched[0].At).Round(time.Millisecond))
	if longest > maxHeartbeatGap {
		t.Errorf("the guest's heartbeat paused %s during the move, want at most %s", longest.Round(time.Millisecond), maxHeartbeatGap)
	}
	if switched[0].Pod != source.Name || switched[1].Pod != target.Name {
		t.Errorf("the heartbeat switched from pod %q to %q, want %q to %q", switched[0].Pod, switched[1].Pod, source.Name, target.Name)
	}

	// The VMI names only the target pod; the source pod and its QEMU go.
	err = framework.WaitFor(ctx, 2*time.Minute, "the source pod deleted and out of activePods", func(ctx context.Context) (bool, error) {
		v, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vmi.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if _, ok := v.Status.ActivePods[source.UID]; ok {
			return false, nil
		}
		if _, ok := v.Status.ActivePods[target.UID]; !ok {
			return false, nil
		}
		_, err = cluster.Kube.CoreV1().Pods(ns).Get(ctx, source.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Error(err)
	}
	err = framework.WaitFor(ctx, time.Minute, "one QEMU of the guest, not the old one", func(context.Context) (bool, error) {
		now, err := framework.QEMUProcesses(vmi)
		return len(now) == 1 && now[0] != qemus[0], err
	})
	if err != nil {
		t.Error(err)
	}

	// The guest answers at its new pod's address.
	if _, err := framework.WaitHTTP(ctx, "http://"+target.Status.PodIP+"/", page, time.Minute); err != nil {
		t.Errorf("the guest's page after the move: %v", err)
	}
}
