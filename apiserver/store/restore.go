package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/etcd"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// binary is virt-apiserver's path in its image (hack/cluster/images.sh),
// for a container that names no command.
const binary = "/usr/bin/virt-apiserver"

// Restored is what a restore did.
type Restored struct {
	Mode             Mode
	SnapshotRevision int64
	// Revision is the restored store's first revision: there it holds
	// exactly the snapshot's objects.
	Revision      int64
	Previous      string
	VMs, VMIs     int
	NewNamespaces []string
	Unavailable   time.Duration
}

// Restore puts the snapshot file back as the platform's whole store: every
// object of virtualization.kubevirt.io goes back to the snapshot's time.
// The snapshot is checked before anything is touched (its sha256 against
// file.json, etcd's integrity hash, etcd's own reader, the store it is
// of); it is staged in the store's pod, the pod restarted, and the store's
// own start puts it in place, keeping the old data until the restored
// store serves (apiserver/etcd). A snapshot the store refuses leaves the
// old store running, unchanged.
func (c *cluster) Restore(ctx context.Context, file string) (*Restored, error) {
	logger := klog.FromContext(ctx)
	var want *Metadata
	switch m, err := ReadMetadata(file); {
	case err == nil:
		want = &m
		if ours := strings.TrimSuffix(strings.TrimPrefix(GroupPrefix, KeyRoot+"/"), "/"); m.Store != "" && m.Store != ours {
			return nil, fmt.Errorf("%s is a snapshot of the store of %s, not of %s", file, m.Store, ours)
		}
	case errors.Is(err, os.ErrNotExist):
		logger.Info("No metadata beside the snapshot: it is checked by its integrity hash alone", "file", file+".json")
	default:
		return nil, err
	}
	d, err := fileDigest(file)
	if err != nil {
		return nil, err
	}
	if err := d.check(want); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	st, err := etcdutl.NewV3(zap.NewNop()).Status(file)
	if err != nil {
		return nil, fmt.Errorf("%s is no etcd snapshot etcd can read: %w", file, err)
	}

	a, err := c.apiserver(ctx)
	if err != nil {
		return nil, err
	}
	var res *Restored
	if a.mode == ModeEmbedded {
		res, err = c.restoreEmbedded(ctx, a, file, d.SHA256)
	} else {
		res, err = c.restoreHA(ctx, a, file, d.SHA256)
		if res != nil {
			res.Revision = st.Revision + etcd.RevisionBump
		}
	}
	if err != nil {
		return nil, err
	}
	res.SnapshotRevision = st.Revision
	if err := c.afterRestore(ctx, res); err != nil {
		return res, err
	}
	return res, nil
}

// restoreEmbedded stages the snapshot in the running virt-apiserver's
// volume, restarts it, and reads what its embedded etcd did.
func (c *cluster) restoreEmbedded(ctx context.Context, a *apiserver, file, sha string) (*Restored, error) {
	logger := klog.FromContext(ctx)
	pods, err := c.readyPods(ctx, apiserverName)
	if err != nil {
		return nil, err
	}
	if len(pods) != 1 {
		return nil, fmt.Errorf("virt-apiserver has %d Ready pods, the embedded mode runs exactly one: kubectl -n %s get pods -l %s=%s", len(pods), namespace, componentLabel, apiserverName)
	}
	restoreDir := path.Join(a.dataDir, "restore")
	bin := binary
	if cmd := a.deployment.Spec.Template.Spec.Containers[0].Command; len(cmd) > 0 {
		bin = cmd[0]
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	logger.Info("Staging the snapshot in the store's pod", "pod", pods[0].Name, "dir", restoreDir)
	if _, err := c.exec(ctx, pods[0].Name, []string{bin, "store", "stage", "--restore-dir=" + restoreDir, "--sha256=" + sha}, f); err != nil {
		return nil, fmt.Errorf("stage the snapshot (the store is unchanged): %w", err)
	}

	replicas := int32(1)
	if a.deployment.Spec.Replicas != nil {
		replicas = *a.deployment.Spec.Replicas
	}
	down := time.Now()
	logger.Info("Restarting virt-apiserver: its embedded etcd starts from the snapshot")
	if err := c.scale(ctx, apiserverName, 0, 2*time.Minute); err != nil {
		return nil, err
	}
	if err := c.scale(ctx, apiserverName, replicas, 3*time.Minute); err != nil {
		return nil, err
	}
	pods, err = c.readyPods(ctx, apiserverName)
	if err != nil || len(pods) == 0 {
		return nil, fmt.Errorf("virt-apiserver has no Ready pod after the restart (%v)", err)
	}
	r, err := c.lastRestore(ctx, pods[0].Name, "", restoreDir)
	if err != nil {
		return nil, err
	}
	if r.Error != "" {
		return nil, fmt.Errorf("the store refused the snapshot and runs on its old data, unchanged: %s (the snapshot is kept in the pod as %s)", r.Error, r.Rejected)
	}
	return &Restored{Mode: ModeEmbedded, Revision: r.Revision, Previous: r.Previous, Unavailable: time.Since(down)}, nil
}

// afterRestore waits until the API is served again, then creates the
// namespaces of restored objects Kubernetes does not have (namespaces are
// Kubernetes', not the store's: a rebuilt cluster lacks them, and without
// them no launcher pod can be created), and counts what came back.
func (c *cluster) afterRestore(ctx context.Context, res *Restored) error {
	gv := virtv1.SchemeGroupVersion.String()
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.kube.Discovery().ServerResourcesForGroupVersion(gv)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s not served through the kube-apiserver 2 min after the restore: %w", gv, err)
	}
	virt, err := virtclient.NewForConfig(c.config)
	if err != nil {
		return err
	}
	var vms, vmis []metav1.Object
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		vmList, err := virt.VirtualizationV1().VirtualMachines("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		vmiList, err := virt.VirtualizationV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		vms, vmis = nil, nil
		for i := range vmList.Items {
			vms = append(vms, &vmList.Items[i])
		}
		for i := range vmiList.Items {
			vmis = append(vmis, &vmiList.Items[i])
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("list the restored VMs and VMIs: %w", err)
	}
	res.VMs, res.VMIs = len(vms), len(vmis)
	seen := map[string]bool{}
	for _, o := range append(vms, vmis...) {
		seen[o.GetNamespace()] = true
	}
	names := make([]string, 0, len(seen))
	for ns := range seen {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		created, err := c.ensureNamespace(ctx, ns)
		if err != nil {
			return fmt.Errorf("namespace %s of restored objects: %w", ns, err)
		}
		if created {
			res.NewNamespaces = append(res.NewNamespaces, ns)
		}
	}
	return nil
}

// Print writes the summary an operator (and test/restore) reads.
func (r *Restored) Print(w io.Writer, file string) {
	fmt.Fprintf(w, "restored: %s\nmode: %s\nsnapshot revision: %d\nstore revision: %d\nvirtualmachines: %d\nvirtualmachineinstances: %d\nold data: %s\n",
		file, r.Mode, r.SnapshotRevision, r.Revision, r.VMs, r.VMIs, orNone(r.Previous))
	if len(r.NewNamespaces) > 0 {
		fmt.Fprintf(w, "created namespaces: %s\n", strings.Join(r.NewNamespaces, " "))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
