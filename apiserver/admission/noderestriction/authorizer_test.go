package noderestriction

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// attributes are those the generic server's authorization filter makes of
// a request to path as u: the same parsing of the field selector.
func attributes(t *testing.T, u user.Info, verb, path string) authorizer.Attributes {
	t.Helper()
	req, err := http.NewRequest(verb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resolver := &request.RequestInfoFactory{APIPrefixes: sets.NewString("apis"), GrouplessAPIPrefixes: sets.NewString()}
	info, err := resolver.NewRequestInfo(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithUser(request.WithRequestInfo(t.Context(), info), u)
	a, err := filters.GetAuthorizerAttributes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestReadAuthorizer(t *testing.T) {
	nodeA := &user.DefaultInfo{Name: handler, Extra: map[string][]string{NodeNameExtra: {"node-a"}}}
	movedA := &user.DefaultInfo{Name: "system:serviceaccount:virt-elsewhere:virt-handler", Extra: map[string][]string{NodeNameExtra: {"node-a"}}}
	noNode := &user.DefaultInfo{Name: handler}
	controller := &user.DefaultInfo{Name: "system:serviceaccount:virt-system:virt-controller"}
	const vmis = "/apis/virtualization.kubevirt.io/v1/virtualmachineinstances"
	tests := []struct {
		name string
		user user.Info
		path string
		deny bool
	}{
		{"list of its node", nodeA, vmis + "?fieldSelector=status.nodeName%3Dnode-a", false},
		{"watch of its node", nodeA, vmis + "?watch=true&fieldSelector=status.nodeName%3Dnode-a", false},
		{"watch of its node in a namespace, with another selector", nodeA,
			"/apis/virtualization.kubevirt.io/v1/namespaces/ns/virtualmachineinstances?watch=1&fieldSelector=metadata.name%3Dx,status.nodeName%3D%3Dnode-a", false},
		{"list of every VMI", nodeA, vmis, true},
		{"watch of every VMI", nodeA, vmis + "?watch=true", true},
		{"list of another node", nodeA, vmis + "?fieldSelector=status.nodeName%3Dnode-b", true},
		{"list of all but another node", nodeA, vmis + "?fieldSelector=status.nodeName!%3Dnode-b", true},
		{"list of its node from another namespace's handler", movedA, vmis + "?fieldSelector=status.nodeName%3Dnode-a", false},
		{"list of every VMI from another namespace's handler", movedA, vmis, true},
		{"a token without a node", noNode, vmis + "?fieldSelector=status.nodeName%3Dnode-a", true},
		{"not restricted", controller, vmis, false},
		{"another resource", nodeA, "/apis/virtualization.kubevirt.io/v1/virtualmachines", false},
	}
	a := NewReadAuthorizer(Identities{ServiceAccounts: DefaultServiceAccounts})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			decision, reason, err := a.Authorize(t.Context(), attributes(t, tc.user, http.MethodGet, tc.path))
			if err != nil {
				t.Fatal(err)
			}
			if tc.deny && decision != authorizer.DecisionDeny {
				t.Errorf("decision %v, want Deny", decision)
			}
			if !tc.deny && decision != authorizer.DecisionNoOpinion {
				t.Errorf("decision %v (%s), want NoOpinion (the next authorizer decides)", decision, reason)
			}
		})
	}
}
