package etcd

import (
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// TestStatefulSetHasTheMemberIdentity holds the flags artifacts/etcd gives
// etcd to the identity a restore gives a member's data (HA*): a restored
// member with another name, peer URL or token is not the member its pod
// starts.
func TestStatefulSetHasTheMemberIdentity(t *testing.T) {
	raw, err := os.ReadFile("../../artifacts/etcd/statefulset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sts appsv1.StatefulSet
	if err := yaml.Unmarshal(raw, &sts); err != nil {
		t.Fatal(err)
	}
	if sts.Name != HAService || sts.Namespace != HANamespace || sts.Spec.ServiceName != HAService ||
		sts.Spec.Replicas == nil || *sts.Spec.Replicas != HAMembers {
		t.Errorf("StatefulSet %s/%s (service %s, replicas %v), want %s/%s, service %s, %d replicas",
			sts.Namespace, sts.Name, sts.Spec.ServiceName, sts.Spec.Replicas, HANamespace, HAService, HAService, HAMembers)
	}
	args := sts.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{
		"--name=$(POD_NAME)",
		"--initial-advertise-peer-urls=" + HAPeerURL("$(POD_NAME)"),
		"--initial-cluster=" + HAInitialCluster(),
		"--initial-cluster-token=" + HAClusterToken,
	} {
		if !slices.Contains(args, want) {
			t.Errorf("etcd's flags lack %s:\n%s", want, strings.Join(args, "\n"))
		}
	}
}
