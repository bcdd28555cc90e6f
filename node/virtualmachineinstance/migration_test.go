package virtualmachineinstance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/migrationcert"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/fakelauncher"
	"kubevirt.dev/virt/node/migrationproxy"
	"kubevirt.dev/virt/node/socket"
)

// migrationIdentity is testNode's migration identity from a CA of the
// test's own.
func migrationIdentity(t *testing.T) migrationproxy.Identity {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "migration-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: migrationcert.CommonName(testNode)}, DNSNames: []string{testNode},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	leaf := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return migrationproxy.Identity{Certificate: func() *tls.Certificate { return leaf }, CAs: func() (*x509.CertPool, error) { return pool, nil }}
}

// migrationFixture is a running guest on testNode and a second launcher
// pod of its VMI on testNode, a migration target (same-node migration: the
// handler is both sides, through the same proxies and TLS).
type migrationFixture struct {
	*fixture
	vmi              *virtv1.VirtualMachineInstance
	srcPod, tgtPod   *corev1.Pod
	src, tgt         *fakelauncher.Server
	sourceNode       string
	migrationUID     types.UID
	networkPrepared0 int
}

func newMigrationFixture(t *testing.T) *migrationFixture {
	return newMigrationFixtureFrom(t, testNode)
}

// newMigrationFixtureFrom: the guest runs on sourceNode; on another node
// than testNode the test plays it, only the target is this handler's.
func newMigrationFixtureFrom(t *testing.T, sourceNode string) *migrationFixture {
	t.Helper()
	vmi := scheduledVMI("mig")
	pod := launcherPodOf(vmi)
	if sourceNode != testNode {
		vmi.Status.Phase, vmi.Status.NodeName = virtv1.Running, sourceNode
		vmi.Status.ActivePods = map[types.UID]string{pod.UID: sourceNode}
		pod.Spec.NodeName = sourceNode
	}
	// Unguarded until internal/ownership has the migration rows of the
	// contract (the API part of issue 26: the source's and the target's
	// migrationState fields, the target's stage and its nodeName
	// switch-over); then newFixture.
	f := newFixtureGuarded(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod}, false)
	m := &migrationFixture{fixture: f, vmi: vmi, srcPod: pod, sourceNode: sourceNode, migrationUID: "vmim-uid-1"}
	f.migration = &MigrationConfig{Address: "127.0.0.1", Identity: migrationIdentity(t)}
	if sourceNode == testNode {
		m.src = f.launcher(vmi, pod)
		f.start()
		f.waitVMI(vmi.Name, "Running", phaseIs(virtv1.Running, ""))
	} else {
		f.start()
	}

	m.tgtPod = launcherPodOf(vmi)
	m.tgtPod.Name, m.tgtPod.UID = "virt-launcher-mig-target", "pod-mig-target"
	m.tgt = f.launcher(vmi, m.tgtPod)
	m.tgt.SetMigrationTarget(true)
	if _, err := f.kube.CoreV1().Pods(testNS).Create(t.Context(), m.tgtPod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The target QEMU's incoming stream socket, an echo.
	listenEcho(t, filepath.Join(f.privateDir(m.tgtPod), layout.MigrationDirName), layout.MigrationQEMUSocketName)
	m.networkPrepared0 = f.network.callCount()
	return m
}

// handOver writes what virt-controller writes once the target pod's
// launcher is ready.
func (m *migrationFixture) handOver() {
	m.controllerWrites(func(s *virtv1.VirtualMachineInstanceStatus) {
		s.ActivePods[m.tgtPod.UID] = testNode
		s.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{
			MigrationUID: m.migrationUID,
			SourceNode:   m.sourceNode, SourcePod: m.srcPod.Name,
			TargetNode: testNode, TargetPod: m.tgtPod.Name,
			MigrationConfiguration: &virtv1.VMIMConfigurationOptions{
				CompletionTimeoutPerGiB: ptr.To[int64](150), ProgressTimeout: ptr.To[int64](150),
			},
		}
	})
}

// controllerWrites changes the VMI's status as virt-controller does.
func (m *migrationFixture) controllerWrites(change func(*virtv1.VirtualMachineInstanceStatus)) {
	m.t.Helper()
	v := m.vmi2()
	change(&v.Status)
	v.ResourceVersion = strconv.FormatInt(m.rv.Add(1), 10)
	if err := m.virt.Tracker().Update(vmiGVR, v, testNS); err != nil {
		m.t.Fatal(err)
	}
}

func (m *migrationFixture) vmi2() *virtv1.VirtualMachineInstance { return m.fixture.vmi(m.vmi.Name) }

// started waits for the target's readiness and the source's start.
func (m *migrationFixture) started() *virtv1.VirtualMachineInstance {
	m.t.Helper()
	m.targetReady()
	v := m.waitVMI(m.vmi.Name, "the migration started", func(v *virtv1.VirtualMachineInstance) bool {
		return v.Status.MigrationState.StartTimestamp != nil && v.Status.MigrationState.Mode == modePreCopy
	})
	mig := m.src.Calls().Migrates
	if len(mig) != 1 || mig[0].GetMigrationUid() != string(m.migrationUID) || mig[0].GetCompletionTimeoutPerGibSeconds() != 150 || mig[0].GetProgressTimeoutSeconds() != 150 {
		m.t.Errorf("Migrate calls %v: want one of migration %s with the configuration", mig, m.migrationUID)
	}
	return v
}

// targetReady waits for the target's readiness and checks how it got
// there.
func (m *migrationFixture) targetReady() *virtv1.VirtualMachineInstance {
	m.t.Helper()
	v := m.waitVMI(m.vmi.Name, "the target ready", func(v *virtv1.VirtualMachineInstance) bool {
		ms := v.Status.MigrationState
		return ms != nil && ms.TargetNodeAddress == "127.0.0.1" && len(ms.TargetDirectMigrationNodePorts) == 3
	})
	tags := map[int32]bool{}
	for _, tag := range v.Status.MigrationState.TargetDirectMigrationNodePorts {
		tags[tag] = true
	}
	if !tags[0] || !tags[49152] || !tags[49153] {
		m.t.Errorf("targetDirectMigrationNodePorts %v: want the tags 0, 49152 and 49153", v.Status.MigrationState.TargetDirectMigrationNodePorts)
	}
	prep := m.tgt.Calls().Prepares
	if len(prep) != 1 || prep[0].GetMigrationUid() != string(m.migrationUID) || len(prep[0].GetInterfaces()) != 1 {
		m.t.Errorf("PrepareMigrationTarget calls %v: want one of migration %s with the NIC", prep, m.migrationUID)
	}
	if m.network.callCount() == m.networkPrepared0 {
		m.t.Error("the target pod's NICs were not prepared")
	}
	return v
}

// listenEcho serves an echo on name in dir (made), as the target pod's
// QEMU would listen on its incoming socket.
func listenEcho(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := socket.Listen(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c := conn.(*net.UnixConn)
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
				_ = c.CloseWrite()
			}()
		}
	}()
}

// dialIn connects to name in dir as a process inside the pod would.
func dialIn(t *testing.T, dir, name string) (*net.UnixConn, error) {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	c, err := net.Dial("unix", "/proc/self/fd/"+strconv.Itoa(int(d.Fd()))+"/"+name)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// TestSameNodeMigration: the handler is target and source of a migration
// within its node; the guest's stream goes through both proxies; the
// switch-over makes the target pod the VMI's launcher, and the source
// launcher that stopped MIGRATED ends nothing and is no stray.
func TestSameNodeMigration(t *testing.T) {
	m := newMigrationFixture(t)
	m.handOver()
	m.started()

	// QEMU's stream, from the source pod's socket to the target pod's.
	srcMig := filepath.Join(m.privateDir(m.srcPod), layout.MigrationDirName)
	c, err := dialIn(t, srcMig, layout.MigrationQEMUSocketName)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(waitTimeout))
	if _, err := c.Write([]byte("memory pages")); err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	if got, err := io.ReadAll(c); err != nil || string(got) != "memory pages" {
		t.Fatalf("through the proxies: got %q, %v", got, err)
	}
	c.Close()

	// Progress reaches the metrics.
	m.src.MigrationProgress(100<<20, 28<<20, 128<<20, 90<<20, 1<<20)
	labels := []string{testNS, m.vmi.Name, testNode}
	m.waitFor("the progress in the metrics", func() bool {
		v, err := testutil.GetGaugeMetricValue(migrationDataProcessed.WithLabelValues(labels...))
		return err == nil && v == 100<<20
	})

	// The switch-over: the target's domain runs.
	m.tgt.Incoming(true, 42)
	v := m.waitVMI(m.vmi.Name, "the switch-over", func(v *virtv1.VirtualMachineInstance) bool {
		return v.Status.MigrationState.Completed
	})
	ms := v.Status.MigrationState
	if v.Status.NodeName != testNode || !ms.TargetNodeDomainDetected || ms.EndTimestamp == nil || ms.TargetNodeDomainReadyTimestamp == nil || ms.Failed || ms.DowntimeMilliseconds != 42 {
		t.Errorf("after the switch-over: nodeName %q, migrationState %+v", v.Status.NodeName, ms)
	}
	// The source stops MIGRATED and exits ExitMigrated.
	m.src.MigratedAway(42)
	m.updatePod(m.srcPod, terminated(5))
	m.settled()
	if v := m.vmi2(); v.Status.Phase != virtv1.Running {
		t.Fatalf("after the source left: %s; events %v", describe(v), m.eventList())
	}
	if _, err := os.Lstat(filepath.Join(srcMig, layout.MigrationQEMUSocketName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the source proxy's socket outlived the migration: %v", err)
	}
	if n, err := testutil.GetCounterMetricValue(migrationSucceeded.WithLabelValues(labels...)); err != nil || n != 1 {
		t.Errorf("kubevirt_vmi_migration_succeeded = %v, %v; want 1", n, err)
	}
	if d, err := testutil.GetGaugeMetricValue(migrationDowntime.WithLabelValues(labels...)); err != nil || d != 0.042 {
		t.Errorf("kubevirt_vmi_migration_downtime_seconds = %v, %v; want 0.042", d, err)
	}

	// virt-controller drops the source pod: the target's launcher is the
	// VMI's, adopted, not started again, and no stray.
	m.controllerWrites(func(s *virtv1.VirtualMachineInstanceStatus) { delete(s.ActivePods, m.srcPod.UID) })
	m.ctrl.sweep(m.ctx)
	m.tgt.Pause(m.ctx, nil)
	v = m.waitVMI(m.vmi.Name, "the target's pause reported", func(v *virtv1.VirtualMachineInstance) bool {
		return condition(v, virtv1.VirtualMachineInstancePaused) != nil
	})
	m.settled()
	if calls := m.tgt.Calls(); calls.Sync != 0 || calls.Kill != 0 {
		t.Errorf("the target launcher got %d Sync and %d Kill calls", calls.Sync, calls.Kill)
	}
	if v.Status.Phase != virtv1.Running {
		t.Errorf("VMI %s", describe(v))
	}
}

// TestMigrationFails: the source's job fails; the guest runs on.
func TestMigrationFails(t *testing.T) {
	m := newMigrationFixture(t)
	m.handOver()
	m.started()
	m.src.MigrationFailed("progress timeout: 150 s without progress")
	v := m.waitVMI(m.vmi.Name, "the failure", func(v *virtv1.VirtualMachineInstance) bool {
		return v.Status.MigrationState.Failed
	})
	ms := v.Status.MigrationState
	if ms.FailureReason != "progress timeout: 150 s without progress" || ms.EndTimestamp == nil || ms.Completed || v.Status.Phase != virtv1.Running || v.Status.NodeName != testNode {
		t.Errorf("after the failure: %s, migrationState %+v", describe(v), ms)
	}
	m.settled()
	if _, err := os.Lstat(filepath.Join(m.privateDir(m.srcPod), layout.MigrationDirName, layout.MigrationQEMUSocketName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the source proxy's socket outlived the migration: %v", err)
	}
	if n, err := testutil.GetCounterMetricValue(migrationFailed.WithLabelValues(testNS, m.vmi.Name, testNode)); err != nil || n != 1 {
		t.Errorf("kubevirt_vmi_migration_failed = %v, %v; want 1", n, err)
	}
	if calls := m.src.Calls(); calls.Kill != 0 || len(calls.Shutdowns) != 0 {
		t.Errorf("the source launcher was told to stop: %+v", calls)
	}
}

// TestMigrationAborted: abortRequested makes the source cancel the job.
func TestMigrationAborted(t *testing.T) {
	m := newMigrationFixture(t)
	m.handOver()
	m.started()
	m.controllerWrites(func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.AbortRequested = true })
	v := m.waitVMI(m.vmi.Name, "the abort", func(v *virtv1.VirtualMachineInstance) bool {
		return v.Status.MigrationState.Failed && v.Status.MigrationState.AbortStatus == abortDone
	})
	if cancels := m.src.Calls().Cancels; len(cancels) != 1 || cancels[0].GetMigrationUid() != string(m.migrationUID) {
		t.Errorf("CancelMigration calls %v", cancels)
	}
	if v.Status.Phase != virtv1.Running || v.Status.MigrationState.EndTimestamp == nil {
		t.Errorf("after the abort: %s, %+v", describe(v), v.Status.MigrationState)
	}
	m.settled()
}

// TestMigrationTarget: the handler of another node than the source's
// prepares the target, keeps its incoming guest from the stray sweep, and
// takes the VMI over in the write that completes the migration.
func TestMigrationTarget(t *testing.T) {
	m := newMigrationFixtureFrom(t, "node-0")
	m.handOver()
	m.targetReady()
	m.tgt.Incoming(false, 0)
	m.ctrl.sweep(m.ctx)
	m.settled()
	if n := m.tgt.Calls().Kill; n != 0 {
		t.Fatalf("the target's incoming guest was killed as a stray (%d Kill calls)", n)
	}
	if v := m.vmi2(); v.Status.NodeName != "node-0" || v.Status.MigrationState.Completed {
		t.Fatalf("before the switch-over: nodeName %q, %+v", v.Status.NodeName, v.Status.MigrationState)
	}
	m.tgt.Incoming(true, 7)
	v := m.waitVMI(m.vmi.Name, "the switch-over", func(v *virtv1.VirtualMachineInstance) bool {
		return v.Status.MigrationState.Completed && v.Status.NodeName == testNode
	})
	if ms := v.Status.MigrationState; !ms.TargetNodeDomainDetected || ms.EndTimestamp == nil || ms.TargetNodeDomainReadyTimestamp == nil || ms.DowntimeMilliseconds != 7 {
		t.Errorf("after the switch-over: %+v", ms)
	}
	m.settled()
	if calls := m.tgt.Calls(); calls.Sync != 0 || calls.Kill != 0 {
		t.Errorf("the target launcher got %d Sync and %d Kill calls", calls.Sync, calls.Kill)
	}
	if v := m.vmi2(); v.Status.Phase != virtv1.Running {
		t.Errorf("VMI %s", describe(v))
	}
}
