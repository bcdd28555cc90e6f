package apiserver

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubevirt.dev/virt/apiserver"
	"kubevirt.dev/virt/apiserver/etcd"
	"kubevirt.dev/virt/apiserver/testserver"
)

// TestExternalEtcd: with --etcd-servers the server keeps its objects in
// that etcd, under the group's prefix, encoded as protobuf.
func TestExternalEtcd(t *testing.T) {
	ctx := t.Context()
	external, err := etcd.Start(ctx, etcd.Options{DataDir: filepath.Join(t.TempDir(), "etcd"), ClientPort: testserver.FreePort(t), PeerPort: testserver.FreePort(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(external.Close)

	dataDir := t.TempDir()
	server := testserver.Start(t, dataDir, testserver.WithExternalEtcd(external.ClientURL()))
	client := newClient(t, server.ClientConfig)
	if _, err := client.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, tinyVMI("ext"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	etcdClient, err := clientv3.New(clientv3.Config{Endpoints: []string{external.ClientURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcdClient.Close()
	getCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := etcdClient.Get(getCtx, "/registry/virtualization.kubevirt.io/virtualmachineinstances/default/ext")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("the VMI is not in the external etcd under the group's prefix")
	}
	if v := resp.Kvs[0].Value; !bytes.HasPrefix(v, []byte("k8s\x00")) {
		t.Errorf("stored value starts %q, want the Kubernetes protobuf envelope", v[:min(len(v), 8)])
	}
	if matches, _ := filepath.Glob(filepath.Join(dataDir, "etcd", "*")); len(matches) != 0 {
		t.Errorf("an embedded etcd was started although --etcd-servers was given: %v", matches)
	}
}

// TestStorageMediaType: --storage-media-type decides how new objects are
// stored, and objects stored in the other encoding stay readable.
func TestStorageMediaType(t *testing.T) {
	ctx := t.Context()
	external, err := etcd.Start(ctx, etcd.Options{DataDir: filepath.Join(t.TempDir(), "etcd"),
		ClientPort: testserver.FreePort(t), PeerPort: testserver.FreePort(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(external.Close)
	etcdClient, err := clientv3.New(clientv3.Config{Endpoints: []string{external.ClientURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcdClient.Close()
	stored := func(name string) []byte {
		t.Helper()
		resp, err := etcdClient.Get(ctx, "/registry/virtualization.kubevirt.io/virtualmachineinstances/default/"+name)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("VMI %s is not in etcd: %v", name, err)
		}
		return resp.Kvs[0].Value
	}

	server := testserver.Start(t, t.TempDir(), testserver.WithExternalEtcd(external.ClientURL()))
	if _, err := newClient(t, server.ClientConfig).VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, tinyVMI("proto"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	server.Stop(t)

	server = testserver.Start(t, t.TempDir(), testserver.WithExternalEtcd(external.ClientURL()), func(o *apiserver.Options) {
		o.Recommended.Etcd.DefaultStorageMediaType = "application/json"
	})
	vmis := newClient(t, server.ClientConfig).VirtualizationV1().VirtualMachineInstances(ns)
	if _, err := vmis.Create(ctx, tinyVMI("json"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := stored("json"); !bytes.HasPrefix(v, []byte("{")) {
		t.Errorf("with --storage-media-type=application/json the stored value starts %q, want a JSON object", v[:min(len(v), 8)])
	}
	if _, err := vmis.Get(ctx, "proto", metav1.GetOptions{}); err != nil {
		t.Errorf("the VMI stored as protobuf is unreadable after switching to JSON: %v", err)
	}
}
