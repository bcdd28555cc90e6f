package etcd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
	"k8s.io/klog/v2"
)

// A restore is handed to the embedded etcd as a file: a snapshot staged as
// PendingSnapshot in Options.RestoreDir (virt-apiserver store stage, run in
// the server's pod) is put in place by the next Start, before etcd serves
// anyone. The store's own process restores it, as the store's user, into its
// own volume: nobody edits the data directory from outside the pod.
const (
	// PendingSnapshot is the staged snapshot's name in RestoreDir.
	PendingSnapshot = "snapshot.db"
	// ResultFile is where Start reports the last restore, in RestoreDir.
	ResultFile = "result.json"
	// RevisionBump is how far a restored store's revision jumps past the
	// higher of the snapshot's and the replaced store's (the bump of
	// Kubernetes' restore documentation): beyond every revision a client
	// saw, so every watch from before ends "compacted" and its informer
	// lists again instead of waiting for revisions that never come.
	RevisionBump = 1_000_000_000
)

// RestoreResult is what Start did with a staged snapshot.
type RestoreResult struct {
	Time string `json:"time"`
	// SHA256 is the snapshot file's.
	SHA256 string `json:"sha256,omitempty"`
	// SnapshotRevision is the snapshot's revision; Revision the restored
	// store's first: there it holds exactly the snapshot's keys.
	SnapshotRevision int64 `json:"snapshotRevision"`
	Revision         int64 `json:"revision,omitempty"`
	// Previous is the replaced data directory, kept beside the new one;
	// the operator deletes it once the restored store is trusted.
	Previous string `json:"previous,omitempty"`
	// Error says why the snapshot was not put in place; the store runs on
	// its old data then, unchanged, and the snapshot is kept as Rejected.
	Error    string `json:"error,omitempty"`
	Rejected string `json:"rejected,omitempty"`
}

// startFromSnapshot restores the staged snapshot into a new data
// directory, starts etcd on it and proves it (it serves, at the expected
// revision, keys under RestoreCheckPrefix: a snapshot of another store has
// none). Only a proven store replaces the old data, which is kept; on any
// failure the old store starts as it was and the result says why.
func startFromSnapshot(ctx context.Context, o Options, pending string) (*Server, error) {
	logger := klog.FromContext(ctx)
	stamp := time.Now().UTC().Format("20060102T150405Z")
	res := RestoreResult{Time: time.Now().UTC().Format(time.RFC3339)}
	reject := func(err error) (*Server, error) {
		res.Error = err.Error()
		res.Rejected = filepath.Join(o.RestoreDir, "rejected-"+stamp+".db")
		if rerr := os.Rename(pending, res.Rejected); rerr != nil {
			return nil, fmt.Errorf("restore failed (%w), and the staged snapshot cannot be set aside: %w", err, rerr)
		}
		if werr := writeResult(o.RestoreDir, res); werr != nil {
			return nil, werr
		}
		if o.AwaitSnapshot != "" {
			// Told to start from this snapshot only: the old data, kept
			// unchanged, is the store being replaced, not one to serve.
			return nil, fmt.Errorf("start from the snapshot %s: %w", o.AwaitSnapshot, err)
		}
		logger.Error(err, "Restoring the staged snapshot failed: starting the old store, unchanged", "rejected", res.Rejected)
		return start(ctx, o)
	}

	mgr := snapshot.NewV3(zap.NewNop())
	st, err := mgr.Status(pending)
	if err != nil {
		return reject(fmt.Errorf("the staged snapshot is no etcd snapshot: %w", err))
	}
	res.SnapshotRevision = st.Revision
	if res.SHA256, err = fileSHA256(pending); err != nil {
		return reject(err)
	}
	// The restored revision must pass the old store's too: an older
	// snapshot after an earlier restore is below it.
	var current int64
	if old, err := mgr.Status(filepath.Join(o.DataDir, "member", "snap", "db")); err == nil {
		current = old.Revision
	} else if !errors.Is(err, os.ErrNotExist) {
		return reject(fmt.Errorf("read the current store's revision: %w", err))
	}
	bump := int64(RevisionBump)
	if current > st.Revision {
		bump += current - st.Revision
	}
	res.Revision = st.Revision + bump

	restoring := o.DataDir + ".restoring"
	if err := os.RemoveAll(restoring); err != nil {
		return reject(fmt.Errorf("clear %s: %w", restoring, err))
	}
	peer := PeerURL(o.PeerPort)
	// Restore checks the integrity hash etcd appends to every snapshot it
	// streams: a truncated or altered file is refused here.
	if err := mgr.Restore(snapshot.RestoreConfig{
		SnapshotPath:        pending,
		Name:                MemberName,
		OutputDataDir:       restoring,
		PeerURLs:            []string{peer.String()},
		InitialCluster:      InitialCluster(o.PeerPort),
		InitialClusterToken: ClusterToken,
		RevisionBump:        uint64(bump),
		MarkCompacted:       true,
	}); err != nil {
		_ = os.RemoveAll(restoring)
		return reject(fmt.Errorf("restore the staged snapshot: %w", err))
	}

	// Swap, keeping the old directory; swapped back if the new store does
	// not prove itself.
	previous := ""
	if _, err := os.Stat(o.DataDir); err == nil {
		previous = o.DataDir + ".before-restore-" + stamp
		if err := os.Rename(o.DataDir, previous); err != nil {
			_ = os.RemoveAll(restoring)
			return reject(fmt.Errorf("set the old store aside: %w", err))
		}
	}
	if err := os.Rename(restoring, o.DataDir); err != nil {
		return reject(errors.Join(fmt.Errorf("put the restored store in place: %w", err), swapBack(o.DataDir, previous, "")))
	}
	s, err := start(ctx, o)
	if err == nil {
		err = prove(ctx, s.ClientURL(), o.RestoreCheckPrefix, res.Revision)
		if err != nil {
			s.Close()
		}
	}
	if err != nil {
		failed := o.DataDir + ".failed-restore-" + stamp
		return reject(errors.Join(fmt.Errorf("the restored store does not serve: %w", err), swapBack(o.DataDir, previous, failed)))
	}
	res.Previous = previous
	if err := markApplied(o.RestoreDir, res.SHA256); err != nil {
		s.Close()
		return nil, err
	}
	if o.AwaitSnapshot != "" {
		if err := markApplied(o.RestoreDir, o.AwaitSnapshot); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := os.Remove(pending); err != nil {
		s.Close()
		return nil, fmt.Errorf("remove the applied snapshot %s: %w", pending, err)
	}
	if err := writeResult(o.RestoreDir, res); err != nil {
		s.Close()
		return nil, err
	}
	logger.Info("Restored the store from the staged snapshot", "snapshotRevision", res.SnapshotRevision,
		"revision", res.Revision, "previous", previous)
	return s, nil
}

// swapBack puts the old data directory back in place; the failed one goes
// to failed (removed when failed is empty: it is the restore's own copy).
func swapBack(dataDir, previous, failed string) error {
	var err error
	if failed != "" {
		err = os.Rename(dataDir, failed)
	} else {
		err = os.RemoveAll(dataDir)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("set the failed restore aside: %w", err)
	}
	if previous == "" {
		return nil
	}
	if err := os.Rename(previous, dataDir); err != nil {
		return fmt.Errorf("put the old store back from %s: %w", previous, err)
	}
	return nil
}

// prove reads the restored store through a client: it must answer at rev
// and, when prefix is set, hold keys under prefix.
func prove(ctx context.Context, endpoint, prefix string, rev int64) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	key, opts := "\x00", []clientv3.OpOption{clientv3.WithFromKey(), clientv3.WithCountOnly(), clientv3.WithRev(rev)}
	if prefix != "" {
		key, opts = prefix, []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(rev)}
	}
	resp, err := cli.Get(ctx, key, opts...)
	if err != nil {
		return fmt.Errorf("read the restored store at revision %d: %w", rev, err)
	}
	if prefix != "" && resp.Count == 0 {
		return fmt.Errorf("the snapshot holds no key under %s: a snapshot of another store", prefix)
	}
	return nil
}

// LastRestore reads the result of the last restore from restoreDir.
func LastRestore(restoreDir string) (RestoreResult, error) {
	var res RestoreResult
	raw, err := os.ReadFile(filepath.Join(restoreDir, ResultFile))
	if err != nil {
		return res, err
	}
	return res, json.Unmarshal(raw, &res)
}

func writeResult(dir string, res RestoreResult) error {
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ResultFile+".partial")
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the restore result: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, ResultFile))
}

// awaitStaged waits until the snapshot of sha256 sum is staged in
// restoreDir, unless it was applied already. A store told to start from a
// snapshot (a mode switch carrying the store, hack/cluster/deploy.sh) must
// not serve its old data meanwhile: clients would act on a store that is
// about to be replaced.
//
// The request is SHA256 or SHA256@ID: the same snapshot restored again is
// another request (another ID), applied once each.
func awaitStaged(ctx context.Context, restoreDir, request string) error {
	if request == "" || applied(restoreDir, request) {
		return nil
	}
	sum, _, _ := strings.Cut(request, "@")
	if err := os.MkdirAll(restoreDir, 0o700); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Waiting for the snapshot to start from (virt-apiserver store stage)", "sha256", sum, "dir", restoreDir)
	pending := filepath.Join(restoreDir, PendingSnapshot)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if _, err := os.Stat(pending); err == nil {
			got, err := fileSHA256(pending)
			if err != nil {
				return err
			}
			if got != sum {
				return fmt.Errorf("the staged snapshot's sha256 is %s, this store starts only from %s", got, sum)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the snapshot %s: %w", sum, ctx.Err())
		case <-t.C:
		}
	}
}

// applied tells whether the snapshot of sha256 sum was put in place once.
func applied(restoreDir, sum string) bool {
	_, err := os.Stat(filepath.Join(restoreDir, "applied", sum))
	return err == nil
}

func markApplied(restoreDir, sum string) error {
	dir := filepath.Join(restoreDir, "applied")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sum), nil, 0o600)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MemberRestore is a member of the HA mode's cluster to start from a
// snapshot (the init step of its pod, artifacts/etcd).
type MemberRestore struct {
	// Name is the member's (its pod's, HAMemberName).
	Name string
	// DataDir is its etcd --data-dir, RestoreDir where the snapshot is
	// staged, both on its volume.
	DataDir, RestoreDir string
	// AwaitSnapshot is the sha256 of the snapshot to start from; empty:
	// start as it is.
	AwaitSnapshot string
}

// RestoreMember waits for the staged snapshot and restores it as the
// member's data, with the HA cluster's identity and RevisionBump past the
// snapshot's revision (the same for every member: they must hold one
// state), keeping the old data beside it. Every member of the cluster
// restores the same snapshot before any starts; the cluster they form is
// proven by its operator (virt-apiserver store carry-in) before
// virt-apiserver serves from it.
func RestoreMember(ctx context.Context, m MemberRestore) error {
	if m.AwaitSnapshot == "" || applied(m.RestoreDir, m.AwaitSnapshot) {
		return nil
	}
	if err := awaitStaged(ctx, m.RestoreDir, m.AwaitSnapshot); err != nil {
		return err
	}
	pending := filepath.Join(m.RestoreDir, PendingSnapshot)
	stamp := time.Now().UTC().Format("20060102T150405Z")
	mgr := snapshot.NewV3(zap.NewNop())
	st, err := mgr.Status(pending)
	if err != nil {
		return fmt.Errorf("the staged snapshot is no etcd snapshot: %w", err)
	}
	restoring := m.DataDir + ".restoring"
	if err := os.RemoveAll(restoring); err != nil {
		return err
	}
	if err := mgr.Restore(snapshot.RestoreConfig{
		SnapshotPath:        pending,
		Name:                m.Name,
		OutputDataDir:       restoring,
		PeerURLs:            []string{HAPeerURL(m.Name)},
		InitialCluster:      HAInitialCluster(),
		InitialClusterToken: HAClusterToken,
		RevisionBump:        RevisionBump,
		MarkCompacted:       true,
	}); err != nil {
		_ = os.RemoveAll(restoring)
		return fmt.Errorf("restore the staged snapshot as member %s: %w", m.Name, err)
	}
	sum, _, _ := strings.Cut(m.AwaitSnapshot, "@")
	res := RestoreResult{Time: time.Now().UTC().Format(time.RFC3339), SHA256: sum,
		SnapshotRevision: st.Revision, Revision: st.Revision + RevisionBump}
	if _, err := os.Stat(m.DataDir); err == nil {
		res.Previous = m.DataDir + ".before-restore-" + stamp
		if err := os.Rename(m.DataDir, res.Previous); err != nil {
			return fmt.Errorf("set the old data aside: %w", err)
		}
	}
	if err := os.Rename(restoring, m.DataDir); err != nil {
		return errors.Join(fmt.Errorf("put the restored data in place: %w", err), swapBack(m.DataDir, res.Previous, ""))
	}
	if err := markApplied(m.RestoreDir, m.AwaitSnapshot); err != nil {
		return err
	}
	if err := os.Remove(pending); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Restored the member from the staged snapshot", "member", m.Name,
		"snapshotRevision", res.SnapshotRevision, "revision", res.Revision, "previous", res.Previous)
	return writeResult(m.RestoreDir, res)
}
