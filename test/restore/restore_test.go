package restore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

const (
	apiService = "v1.virtualization.kubevirt.io"
	// The keys a backup counts, per resource, in its metadata.
	vmKeys  = "virtualization.kubevirt.io/virtualmachines"
	vmiKeys = "virtualization.kubevirt.io/virtualmachineinstances"
	// restartTimeout bounds the wait for a restored VM's guest to run
	// again: its old instance must fail first (the node finds its pod
	// gone), then a new one boots under software emulation.
	restartTimeout = 2 * framework.BootTimeout
)

// backupMetadata is the FILE.json make backup writes next to a snapshot.
type backupMetadata struct {
	Snapshot  string         `json:"snapshot"`
	SHA256    string         `json:"sha256"`
	Size      int64          `json:"size"`
	Mode      string         `json:"mode"`
	Time      string         `json:"time"`
	Revision  int64          `json:"revision"`
	TotalKeys int64          `json:"totalKeys"`
	Keys      map[string]int `json:"keys"`
}

// storeRevision is the line make restore prints with the restored store's
// first revision: there the store holds exactly the snapshot's objects.
var storeRevision = regexp.MustCompile(`(?m)^store revision: ([0-9]+)$`)

// TestBackupPurgeUpRestore is issue 17's acceptance: backup → make down
// PURGE=1 → make up → restore brings back every VM and VMI definition
// (same namespace, name, UID and spec), and the platform works on the
// restored store: a new VM starts, a restored runStrategy Always VM runs a
// guest again, a restored VMI whose pod went with the old cluster fails,
// a VM pinned to revisions of an instancetype edited since starts with
// the revisions' size (issue 24).
func TestBackupPurgeUpRestore(t *testing.T) {
	ctx := t.Context()
	root := repoRoot(t)
	// current is the cluster whose clients work: initial until the
	// rebuild, the new connection after it.
	current := initial
	modeBefore, err := current.Mode()
	if err != nil {
		t.Fatal(err)
	}

	nsObj, err := current.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "restore-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	t.Cleanup(func() { deleteNamespace(t, current, ns) })

	// Two stopped VMs, one running, a VMI of its own: the examples.
	running := exampleVM(t, current, "vm-running", virtv1.RunStrategyAlways)
	halted := []*virtv1.VirtualMachine{
		exampleVM(t, current, "vm-halted-a", virtv1.RunStrategyHalted),
		exampleVM(t, current, "vm-halted-b", virtv1.RunStrategyHalted),
	}
	standalone, err := current.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	standalone.Name = "vmi-standalone"
	created := map[string]types.UID{}
	for _, vm := range append([]*virtv1.VirtualMachine{running}, halted...) {
		got, err := current.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create VM %s: %v", vm.Name, err)
		}
		created["vm/"+got.Name] = got.UID
	}
	got, err := current.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, standalone, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VMI %s: %v", standalone.Name, err)
	}
	created["vmi/"+got.Name] = got.UID
	for _, name := range []string{running.Name, standalone.Name} {
		vmi, err := current.WaitVMIRunning(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		created["vmi/"+vmi.Name] = vmi.UID
	}
	t.Logf("created in %s (mode %s): %v", ns, modeBefore, created)
	// A stopped VM pinned to revisions of its instancetype and preference,
	// the instancetype edited since.
	pinned := createPinned(t, current, ns)

	// Backup, to a file of the test's: make down PURGE=1 does not reach it.
	backup := filepath.Join(t.TempDir(), "store.db")
	start := time.Now()
	if _, err := run(t, root, "make", "backup", "BACKUP="+backup); err != nil {
		t.Fatal(err)
	}
	backupTook := time.Since(start)
	meta := readMetadata(t, backup)
	if meta.Mode != string(modeBefore) || meta.Revision <= 0 {
		t.Errorf("backup metadata: mode %q revision %d, want mode %q and a revision", meta.Mode, meta.Revision, modeBefore)
	}
	// The snapshot's content: the store as of its revision, read back
	// while the store still has that revision (it compacts only minutes
	// later).
	wantVMs, wantVMIs := listAt(t, current, meta.Revision)
	if meta.Keys[vmKeys] != len(wantVMs) || meta.Keys[vmiKeys] != len(wantVMIs) {
		t.Errorf("backup metadata counts %d VMs and %d VMIs, the store had %d and %d at revision %d",
			meta.Keys[vmKeys], meta.Keys[vmiKeys], len(wantVMs), len(wantVMIs), meta.Revision)
	}
	for key, uid := range created {
		kind, name, _ := strings.Cut(key, "/")
		want := wantVMs
		if kind == "vmi" {
			want = wantVMIs
		}
		if o, ok := want[ns+"/"+name]; !ok || o.uid != uid {
			t.Fatalf("the snapshot lacks %s %s/%s of UID %s", kind, ns, name, uid)
		}
	}
	t.Logf("backup: %d bytes, %d keys (%d VMs, %d VMIs) at revision %d in %s",
		meta.Size, meta.TotalKeys, len(wantVMs), len(wantVMIs), meta.Revision, backupTook.Round(100*time.Millisecond))

	// The cluster is lost: every piece of state, the platform's mode with it.
	state := current.State
	start = time.Now()
	if _, err := run(t, root, "make", "down", "PURGE=1"); err != nil {
		t.Fatal(err)
	}
	downTook := time.Since(start)
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("%s survived make down PURGE=1 (%v)", state, err)
	}
	start = time.Now()
	if _, err := run(t, root, "make", "up"); err != nil {
		t.Fatal(err)
	}
	upTook := time.Since(start)
	// New clients: the old ones trust the purged CA.
	rebuilt, err := framework.Setup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	current = rebuilt
	if mode, err := current.Mode(); err != nil || mode != framework.ModeEmbedded {
		t.Fatalf("after make down PURGE=1 and make up the platform is in mode %q (%v), want %q", mode, err, framework.ModeEmbedded)
	}
	// A new store: nothing of the snapshot is in it yet.
	freshVMs, freshVMIs := listAt(t, current, 0)
	for key, o := range freshVMs {
		if w, ok := wantVMs[key]; ok && w.uid == o.uid {
			t.Fatalf("the rebuilt cluster's new store already has VM %s of UID %s", key, o.uid)
		}
	}
	for key, o := range freshVMIs {
		if w, ok := wantVMIs[key]; ok && w.uid == o.uid {
			t.Fatalf("the rebuilt cluster's new store already has VMI %s of UID %s", key, o.uid)
		}
	}

	start = time.Now()
	out, err := run(t, root, "make", "restore", "BACKUP="+backup)
	if err != nil {
		t.Fatal(err)
	}
	restoreTook := time.Since(start)
	m := storeRevision.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("make restore printed no %q line", "store revision: N")
	}
	restoredAt, _ := strconv.ParseInt(m[1], 10, 64)
	if err := current.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
		t.Fatal(err)
	}

	// Every definition, as the snapshot had it: the store at its first
	// revision after the restore, before any controller acted on it.
	gotVMs, gotVMIs := listAt(t, current, restoredAt)
	compare(t, "VM", wantVMs, gotVMs)
	compare(t, "VMI", wantVMIs, gotVMIs)
	t.Logf("restored %d VMs and %d VMIs at store revision %d (the snapshot's %d)", len(gotVMs), len(gotVMIs), restoredAt, meta.Revision)

	// The platform works on it. The restored namespace exists again
	// (make restore creates it): a new VM starts.
	newVM := exampleVM(t, current, "vm-new", virtv1.RunStrategyAlways)
	if _, err := current.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, newVM, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a VM after the restore: %v", err)
	}
	restoredAt0 := time.Now()
	oldUID := created["vmi/"+running.Name]
	vmi, err := current.WaitVMI(ctx, ns, running.Name, restartTimeout, "replaced by a running instance",
		func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return v.UID != oldUID && v.Status.Phase == virtv1.Running &&
				framework.Condition(v, virtv1.VirtualMachineInstanceReady) == corev1.ConditionTrue, nil
		})
	if err != nil {
		t.Fatalf("the restored runStrategy Always VM runs no guest: %v", err)
	}
	t.Logf("restored VM %s runs again (instance %s, the snapshot's was %s) %s after the restore",
		running.Name, vmi.UID, oldUID, time.Since(restoredAt0).Round(time.Second))
	if _, err := current.WaitVMIRunning(ctx, ns, newVM.Name); err != nil {
		t.Fatalf("a VM created after the restore: %v", err)
	}
	// The VMI of its own had its pod in the lost cluster: it fails, and
	// stays, with its UID, for its owner to look at.
	end, err := current.WaitVMI(ctx, ns, standalone.Name, time.Minute, "Failed", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.Status.Phase == virtv1.Failed, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if end.UID != created["vmi/"+standalone.Name] ||
		!slices.Contains([]string{virtv1.ReasonLauncherGone, virtv1.ReasonNodeUnresponsive}, end.Status.Reason) {
		t.Errorf("restored VMI %s: UID %s reason %q, want UID %s failed LauncherGone (or NodeUnresponsive)",
			standalone.Name, end.UID, end.Status.Reason, created["vmi/"+standalone.Name])
	}
	t.Logf("restored VMI %s: %s, %s: %s", standalone.Name, end.Status.Phase, end.Status.Reason,
		framework.Condition(end, virtv1.VirtualMachineInstanceReady))
	for _, vm := range halted {
		if _, err := current.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("halted VM %s has an instance after the restore (%v)", vm.Name, err)
		}
	}
	// The revisions are in the store: the pinned VM starts, with its
	// pinned size.
	checkPinned(t, current, ns, pinned)

	t.Logf("measured: backup %s (%d KiB, %d keys), make down PURGE=1 %s, make up %s, make restore %s",
		backupTook.Round(100*time.Millisecond), meta.Size/1024, meta.TotalKeys,
		downTook.Round(time.Second), upTook.Round(time.Second), restoreTook.Round(100*time.Millisecond))
}

// object is what must survive a restore of one VM or VMI.
type object struct {
	uid     types.UID
	created metav1.Time
	labels  map[string]string
	spec    any
}

// listAt lists every VM and VMI of the store, by namespace/name, at
// revision rv exactly (0: the newest).
func listAt(t *testing.T, c *framework.Cluster, rv int64) (vms, vmis map[string]object) {
	t.Helper()
	opts := metav1.ListOptions{}
	if rv > 0 {
		opts.ResourceVersion = strconv.FormatInt(rv, 10)
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	}
	vmList, err := c.Virt.VirtualizationV1().VirtualMachines("").List(t.Context(), opts)
	if err != nil {
		t.Fatalf("list VMs at revision %d: %v", rv, err)
	}
	vmiList, err := c.Virt.VirtualizationV1().VirtualMachineInstances("").List(t.Context(), opts)
	if err != nil {
		t.Fatalf("list VMIs at revision %d: %v", rv, err)
	}
	vms, vmis = map[string]object{}, map[string]object{}
	for _, v := range vmList.Items {
		vms[v.Namespace+"/"+v.Name] = object{v.UID, v.CreationTimestamp, v.Labels, v.Spec}
	}
	for _, v := range vmiList.Items {
		vmis[v.Namespace+"/"+v.Name] = object{v.UID, v.CreationTimestamp, v.Labels, v.Spec}
	}
	return vms, vmis
}

// compare fails for every object that is not back as it was, or is back
// without having been in the snapshot.
func compare(t *testing.T, kind string, want, got map[string]object) {
	t.Helper()
	for key, w := range want {
		g, ok := got[key]
		switch {
		case !ok:
			t.Errorf("%s %s (UID %s) is not back", kind, key, w.uid)
		case g.uid != w.uid:
			t.Errorf("%s %s is back with UID %s, the snapshot's was %s", kind, key, g.uid, w.uid)
		case !g.created.Equal(&w.created) || !apiequality.Semantic.DeepEqual(g.labels, w.labels):
			t.Errorf("%s %s is back created %s labelled %v, the snapshot's was created %s labelled %v",
				kind, key, g.created, g.labels, w.created, w.labels)
		case !apiequality.Semantic.DeepEqual(g.spec, w.spec):
			t.Errorf("%s %s is back with another spec:\n got %+v\nwant %+v", kind, key, g.spec, w.spec)
		}
	}
	for key, g := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("%s %s (UID %s) is in the restored store but was not in the snapshot", kind, key, g.uid)
		}
	}
}

func exampleVM(t *testing.T, c *framework.Cluster, name string, strategy virtv1.VirtualMachineRunStrategy) *virtv1.VirtualMachine {
	t.Helper()
	vm, err := c.ExampleVM("vm-always.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = name
	vm.Spec.RunStrategy = ptr.To(strategy)
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": name}
	return vm
}

func readMetadata(t *testing.T, backup string) backupMetadata {
	t.Helper()
	raw, err := os.ReadFile(backup + ".json")
	if err != nil {
		t.Fatalf("backup metadata: %v", err)
	}
	var meta backupMetadata
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatalf("backup metadata %s.json: %v\n%s", backup, err, raw)
	}
	f, err := os.Open(backup)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != meta.SHA256 || size != meta.Size {
		t.Fatalf("snapshot %s: sha256 %s, %d bytes; its metadata says %s, %d bytes", backup, sum, size, meta.SHA256, meta.Size)
	}
	return meta
}

// run runs a command in the repository's root, as an operator would type
// it there, with its output in the test's log; it returns the output.
func run(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), args[0], args[1:]...)
	cmd.Dir = root
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			t.Logf("%s: %s", strings.Join(args[:2], " "), sc.Text())
			out.WriteString(sc.Text() + "\n")
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	start := time.Now()
	err := cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		return out.String(), fmt.Errorf("%s failed after %s: %w", strings.Join(args, " "), time.Since(start).Round(time.Second), err)
	}
	return out.String(), nil
}

// repoRoot is the repository the test runs in: go test runs a package in
// its directory, two below the root.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	for _, f := range []string{"Makefile", "hack/cluster/store.sh"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%s is not the repository's root: %v", root, err)
		}
	}
	return root
}

// deleteNamespace deletes the test's namespace with the clients that work
// at the end of the test, and waits until it is gone.
func deleteNamespace(t *testing.T, c *framework.Cluster, ns string) {
	ctx := context.Background()
	err := c.Kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("delete namespace %s: %v", ns, err)
		return
	}
	err = framework.WaitFor(ctx, framework.NamespaceDeleteTimeout, "namespace "+ns+" deleted", func(ctx context.Context) (bool, error) {
		_, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Error(err)
	}
}
