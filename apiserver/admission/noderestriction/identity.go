package noderestriction

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
)

// DefaultServiceAccounts are the node daemons of a default installation:
// virt-handler's service account, in whatever namespace the platform runs.
var DefaultServiceAccounts = []string{"virt-handler"}

// Identities says who is node-restricted: users by name, and service
// accounts by their name alone, in any namespace. The latter is how the
// deployment names its node daemons: an overlay that moves the platform to
// another namespace keeps them restricted (failing closed), where a user
// name with the namespace in it would silently stop matching (failing open).
type Identities struct {
	Users           []string
	ServiceAccounts []string
}

// matcher is Identities ready for lookups.
type matcher struct {
	users, serviceAccounts sets.Set[string]
}

func (ids Identities) matcher() matcher {
	return matcher{users: sets.New(ids.Users...), serviceAccounts: sets.New(ids.ServiceAccounts...)}
}

// restricted reports whether u is node-restricted.
func (m matcher) restricted(u user.Info) bool {
	if u == nil {
		return false
	}
	if m.users.Has(u.GetName()) {
		return true
	}
	_, name, err := serviceaccount.SplitUsername(u.GetName())
	return err == nil && m.serviceAccounts.Has(name)
}

// node is the node u's credentials were issued on, "" when they name none
// (or more than one).
func node(u user.Info) string {
	nodes := u.GetExtra()[NodeNameExtra]
	if len(nodes) != 1 {
		return ""
	}
	return nodes[0]
}
