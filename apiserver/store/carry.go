package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/apiserver/etcd"
)

// A mode switch carries the store from one mode's etcd to the other's, so
// that every VM and VMI, their UIDs with them, is there after the switch
// and nothing acts on a missing object (the garbage collector would delete
// the launcher pods of VMIs the new store lacks, and their guests with
// them). The deployment (hack/cluster/deploy.sh) runs:
//
//	CarryOut  before it applies the new mode: the old store's writers
//	          stopped, a snapshot of it;
//	(apply)   the new mode's store started told, by AwaitSnapshotEnv, to
//	          start only from that snapshot: it waits;
//	CarryIn   the snapshot staged in each of the new store's pods, which
//	          put it in place and start.

// AwaitSnapshotEnv names the snapshot a store's pod must start from.
const AwaitSnapshotEnv = "VIRT_STORE_AWAIT_SNAPSHOT"

// initContainer is the HA members' init step (artifacts/etcd) that
// restores a staged snapshot (etcd.RestoreMember).
const initContainer = "restore"

// The HA members' volume (artifacts/etcd: the claim at /var/lib/etcd).
const (
	memberDataDir    = "/var/lib/etcd/data"
	memberRestoreDir = "/var/lib/etcd/restore"
)

// CarryOut stops virt-apiserver and takes the snapshot of the store it
// ran on into target; it returns the snapshot's metadata. In the HA mode
// the replicas stop first and the members, still running, have no writer
// left: the snapshot is the store's last state. The embedded etcd stops
// with its server, so there the snapshot comes first, and what is written
// in the moment between is not carried (a status its writer writes again).
func (c *cluster) CarryOut(ctx context.Context, target string, etcdTLS EtcdTLS) (Metadata, error) {
	a, err := c.apiserver(ctx)
	if err != nil {
		return Metadata{}, err
	}
	if a.mode == ModeHA {
		if err := c.scale(ctx, apiserverName, 0, 2*time.Minute); err != nil {
			return Metadata{}, err
		}
	}
	m, err := c.Backup(ctx, target, etcdTLS)
	if err != nil {
		return m, err
	}
	if a.mode == ModeEmbedded {
		if err := c.scale(ctx, apiserverName, 0, 2*time.Minute); err != nil {
			return m, err
		}
	}
	return m, nil
}

// CarryIn stages the snapshot file in every pod of the new mode's store,
// which waits for it (AwaitSnapshotEnv), and waits until the store runs on
// it.
func (c *cluster) CarryIn(ctx context.Context, file string) error {
	logger := klog.FromContext(ctx)
	d, err := fileDigest(file)
	if err != nil {
		return err
	}
	if err := d.check(nil); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	a, err := c.apiserver(ctx)
	if err != nil {
		return err
	}
	if a.mode == ModeEmbedded {
		restoreDir := path.Join(a.dataDir, "restore")
		pods, err := c.waitingPods(ctx, apiserverName, "", 1)
		if err != nil {
			return err
		}
		if err := c.stageIn(ctx, pods[0], "", file, restoreDir, d.SHA256); err != nil {
			return err
		}
		if err := c.scale(ctx, apiserverName, 1, 3*time.Minute); err != nil {
			return err
		}
		ready, err := c.readyPods(ctx, apiserverName)
		if err != nil || len(ready) == 0 {
			return fmt.Errorf("virt-apiserver not ready on the carried store (%v)", err)
		}
		r, err := c.lastRestore(ctx, ready[0].Name, "", restoreDir)
		if err != nil {
			return err
		}
		if r.SHA256 != d.SHA256 || r.Error != "" {
			return fmt.Errorf("virt-apiserver did not start from the carried snapshot %s: %+v", d.SHA256, r)
		}
		logger.Info("The embedded store runs on the carried snapshot", "revision", r.Revision)
		return nil
	}
	pods, err := c.waitingPods(ctx, etcdName, initContainer, etcd.HAMembers)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if err := c.stageIn(ctx, p, initContainer, file, memberRestoreDir, d.SHA256); err != nil {
			return err
		}
	}
	logger.Info("Staged the carried snapshot in every member", "members", len(pods))
	return nil
}

// waitingPods waits until n pods of component run the container that waits
// for a snapshot (an init container, or the first container when empty).
func (c *cluster) waitingPods(ctx context.Context, component, container string, n int) ([]string, error) {
	var names []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: componentLabel + "=" + component})
		if err != nil {
			return false, nil
		}
		names = nil
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			statuses := p.Status.ContainerStatuses
			if container != "" {
				statuses = p.Status.InitContainerStatuses
			}
			for _, s := range statuses {
				if (container == "" || s.Name == container) && s.State.Running != nil {
					names = append(names, p.Name)
					break
				}
			}
		}
		return len(names) == n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%d pods of %s waiting for the snapshot, want %d: %w", len(names), component, n, err)
	}
	return names, nil
}

func (c *cluster) stageIn(ctx context.Context, pod, container, file, restoreDir, sum string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := c.execIn(ctx, pod, container, []string{binary, "store", "stage", "--restore-dir=" + restoreDir, "--sha256=" + sum}, f); err != nil {
		return fmt.Errorf("stage the snapshot in %s: %w", pod, err)
	}
	return nil
}

// lastRestore reads what the store in pod did with its last snapshot.
func (c *cluster) lastRestore(ctx context.Context, pod, container, restoreDir string) (etcd.RestoreResult, error) {
	var r etcd.RestoreResult
	out, err := c.execIn(ctx, pod, container, []string{binary, "store", "result", "--restore-dir=" + restoreDir}, nil)
	if err != nil {
		return r, fmt.Errorf("read what the store did with the snapshot: %w", err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return r, fmt.Errorf("the store's restore result: %w: %q", err, out)
	}
	return r, nil
}

// restoreHA restores the snapshot into the HA mode's members: virt-apiserver
// stopped, the members restarted all at once told to start from the
// snapshot (their init step waits for it), the snapshot staged in each, the
// members Ready again as one restored cluster, virt-apiserver started.
func (c *cluster) restoreHA(ctx context.Context, a *apiserver, file, sum string) (*Restored, error) {
	logger := klog.FromContext(ctx)
	replicas := int32(1)
	if a.deployment.Spec.Replicas != nil {
		replicas = *a.deployment.Spec.Replicas
	}
	down := time.Now()
	if err := c.scale(ctx, apiserverName, 0, 2*time.Minute); err != nil {
		return nil, err
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"initContainers":[{"name":%q,"env":[{"name":%q,"value":%q}]}]}}}}`,
		initContainer, AwaitSnapshotEnv, sum+"@"+down.UTC().Format("20060102T150405Z"))
	if _, err := c.kube.AppsV1().StatefulSets(namespace).Patch(ctx, etcdName, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return nil, fmt.Errorf("tell the members to start from the snapshot: %w", err)
	}
	// All at once: a rolling restart would wait for a member that waits
	// for its snapshot to be ready.
	if err := c.kube.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: componentLabel + "=" + etcdName}); err != nil {
		return nil, fmt.Errorf("restart the members: %w", err)
	}
	pods, err := c.waitingPods(ctx, etcdName, initContainer, etcd.HAMembers)
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if err := c.stageIn(ctx, p, initContainer, file, memberRestoreDir, sum); err != nil {
			return nil, err
		}
	}
	logger.Info("Staged the snapshot in every member; waiting for them to form the restored cluster")
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		ready, err := c.readyPods(ctx, etcdName)
		return err == nil && len(ready) == etcd.HAMembers, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the members are not Ready on the restored data: %w", err)
	}
	if err := c.scale(ctx, apiserverName, replicas, 3*time.Minute); err != nil {
		return nil, err
	}
	return &Restored{Mode: ModeHA, Previous: memberDataDir + ".before-restore-<time> on each member's claim", Unavailable: time.Since(down)}, nil
}
