package virtualization

// AccessCredential is a credential put into the guest. Exactly one member
// may be set.
type AccessCredential struct {
	// SSHPublicKey adds SSH public keys to the guest.
	SSHPublicKey *SSHPublicKeyAccessCredential
	// UserPassword sets passwords of guest users.
	UserPassword *UserPasswordAccessCredential
}

// SSHPublicKeyAccessCredential is where SSH public keys come from and how
// they reach the guest.
type SSHPublicKeyAccessCredential struct {
	// Source of the keys.
	Source SSHPublicKeyAccessCredentialSource
	// PropagationMethod is how they reach the guest.
	PropagationMethod SSHPublicKeyAccessCredentialPropagationMethod
}

// SSHPublicKeyAccessCredentialSource is where SSH public keys come from.
type SSHPublicKeyAccessCredentialSource struct {
	// Secret whose values are the keys.
	Secret *AccessCredentialSecretSource
}

// SSHPublicKeyAccessCredentialPropagationMethod is how SSH public keys reach
// the guest. Exactly one member may be set.
type SSHPublicKeyAccessCredentialPropagationMethod struct {
	// ConfigDrive writes them into config drive metadata.
	ConfigDrive *ConfigDriveSSHPublicKeyAccessCredentialPropagation
	// NoCloud writes them into NoCloud metadata.
	NoCloud *NoCloudSSHPublicKeyAccessCredentialPropagation
	// QemuGuestAgent writes them into users' authorized_keys through the
	// guest agent, while the guest runs.
	QemuGuestAgent *QemuGuestAgentSSHPublicKeyAccessCredentialPropagation
}

// ConfigDriveSSHPublicKeyAccessCredentialPropagation writes keys into config
// drive metadata.
type ConfigDriveSSHPublicKeyAccessCredentialPropagation struct{}

// NoCloudSSHPublicKeyAccessCredentialPropagation writes keys into NoCloud
// metadata.
type NoCloudSSHPublicKeyAccessCredentialPropagation struct{}

// QemuGuestAgentSSHPublicKeyAccessCredentialPropagation writes keys through
// the guest agent.
type QemuGuestAgentSSHPublicKeyAccessCredentialPropagation struct {
	// Users whose authorized_keys get the keys.
	Users []string
}

// UserPasswordAccessCredential is where passwords come from and how they
// reach the guest.
type UserPasswordAccessCredential struct {
	// Source of the passwords.
	Source UserPasswordAccessCredentialSource
	// PropagationMethod is how they reach the guest.
	PropagationMethod UserPasswordAccessCredentialPropagationMethod
}

// UserPasswordAccessCredentialSource is where passwords come from.
type UserPasswordAccessCredentialSource struct {
	// Secret mapping user names to passwords.
	Secret *AccessCredentialSecretSource
}

// UserPasswordAccessCredentialPropagationMethod is how passwords reach the
// guest.
type UserPasswordAccessCredentialPropagationMethod struct {
	// QemuGuestAgent sets them through the guest agent.
	QemuGuestAgent *QemuGuestAgentUserPasswordAccessCredentialPropagation
}

// QemuGuestAgentUserPasswordAccessCredentialPropagation sets passwords
// through the guest agent.
type QemuGuestAgentUserPasswordAccessCredentialPropagation struct{}

// AccessCredentialSecretSource names a secret of the VMI's namespace.
type AccessCredentialSecretSource struct {
	// SecretName is the secret's name.
	SecretName string
}
