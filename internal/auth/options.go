package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
)

// resolved is a Config turned into what gophercloud takes.
type resolved struct {
	method Method
	ao     gophercloud.AuthOptions
	eo     gophercloud.EndpointOpts
	tls    *tls.Config
	who    string // for messages: never a secret
}

// Check reports what cfg lacks for its method, without contacting anyone.
// Env and Cloud are checked once their source is read.
func (cfg Config) Check() error {
	_, err := resolve(cfg)
	return err
}

func resolve(cfg Config) (resolved, error) {
	switch cfg.Method {
	case Env:
		env := FromEnv(os.Getenv)
		if env.Method == Env {
			return resolved{}, errors.New("auth.method = \"env\": neither OS_CLOUD nor OS_AUTH_URL is set")
		}
		r, err := resolve(env)
		if err != nil {
			return r, fmt.Errorf("from the OS_* environment: %w", err)
		}
		return r, nil
	case Cloud:
		return fromClouds(cfg)
	case Password, ApplicationCredential:
		return fromFields(cfg)
	}
	return resolved{}, fmt.Errorf("auth.method %q: want one of %v", cfg.Method, Methods)
}

func fromFields(cfg Config) (resolved, error) {
	var missing []string
	need := func(ok bool, what string) {
		if !ok {
			missing = append(missing, what)
		}
	}
	need(cfg.AuthURL != "", "auth_url")
	ao := gophercloud.AuthOptions{IdentityEndpoint: cfg.AuthURL}
	who := ""
	switch cfg.Method {
	case Password:
		need(cfg.Username != "" || cfg.UserID != "", "username or user_id")
		need(cfg.Password != "", "password")
		need(cfg.ProjectName != "" || cfg.ProjectID != "", "project_name or project_id")
		ao.Username, ao.UserID, ao.Password = cfg.Username, cfg.UserID, cfg.Password
		ao.DomainName, ao.DomainID = domain(cfg.UserDomainName, cfg.UserDomainID)
		scope := gophercloud.AuthScope{ProjectID: cfg.ProjectID}
		if cfg.ProjectID == "" {
			scope.ProjectName = cfg.ProjectName
			scope.DomainName, scope.DomainID = domain(cfg.ProjectDomainName, cfg.ProjectDomainID)
		}
		ao.Scope = &scope
		who = fmt.Sprintf("password as user %s, project %s", first(cfg.Username, cfg.UserID), first(cfg.ProjectName, cfg.ProjectID))
	case ApplicationCredential:
		need(cfg.ApplicationCredentialSecret != "", "application_credential_secret")
		need(cfg.ApplicationCredentialID != "" || cfg.ApplicationCredentialName != "",
			"application_credential_id or application_credential_name")
		if cfg.ApplicationCredentialID == "" {
			need(cfg.Username != "" || cfg.UserID != "", "username or user_id (with application_credential_name)")
		}
		ao.ApplicationCredentialID = cfg.ApplicationCredentialID
		ao.ApplicationCredentialName = cfg.ApplicationCredentialName
		ao.ApplicationCredentialSecret = cfg.ApplicationCredentialSecret
		if cfg.ApplicationCredentialID == "" {
			ao.Username, ao.UserID = cfg.Username, cfg.UserID
			ao.DomainName, ao.DomainID = domain(cfg.UserDomainName, cfg.UserDomainID)
		}
		who = "application credential " + first(cfg.ApplicationCredentialID, cfg.ApplicationCredentialName)
	}
	if len(missing) > 0 {
		return resolved{}, fmt.Errorf("auth.method = %q needs %s", cfg.Method, strings.Join(missing, ", "))
	}
	eo, err := endpointOpts(cfg.Region, cfg.Interface)
	if err != nil {
		return resolved{}, err
	}
	t, err := caBundle(cfg.CACert)
	if err != nil {
		return resolved{}, err
	}
	return resolved{method: cfg.Method, ao: ao, eo: eo, tls: t, who: who}, nil
}

// fromClouds reads one cloud from clouds.yaml (and secure.yaml beside
// it). Region, interface and cacert in our config override the file's.
func fromClouds(cfg Config) (resolved, error) {
	if cfg.Cloud == "" {
		return resolved{}, errors.New("auth.method = \"cloud\" needs auth.cloud")
	}
	opts := []clouds.ParseOption{clouds.WithCloudName(cfg.Cloud)}
	if cfg.CloudsFile != "" {
		if _, err := os.Stat(cfg.CloudsFile); err != nil {
			return resolved{}, fmt.Errorf("auth.clouds_file: %w", err)
		}
		opts = append(opts, clouds.WithLocations(cfg.CloudsFile))
	}
	if cfg.Region != "" {
		opts = append(opts, clouds.WithRegion(cfg.Region))
	}
	if cfg.Interface != "" {
		opts = append(opts, clouds.WithEndpointType(cfg.Interface))
	}
	ao, eo, t, err := clouds.Parse(opts...)
	if err != nil {
		return resolved{}, fmt.Errorf("clouds.yaml, cloud %q: %w", cfg.Cloud, err)
	}
	if ao.IdentityEndpoint == "" {
		return resolved{}, fmt.Errorf("clouds.yaml, cloud %q: no auth_url", cfg.Cloud)
	}
	if eo.Availability == "" {
		eo.Availability = gophercloud.AvailabilityPublic
	}
	if cfg.CACert != "" {
		if t, err = caBundle(cfg.CACert); err != nil {
			return resolved{}, err
		}
	}
	method, who := Password, "cloud "+cfg.Cloud
	if ao.ApplicationCredentialSecret != "" {
		method = ApplicationCredential
	}
	return resolved{method: method, ao: ao, eo: eo, tls: t, who: who}, nil
}

// FromEnv reads the variables an openrc file or `openstack` sets. With
// OS_CLOUD it names a clouds.yaml cloud; with OS_AUTH_URL it is a password
// or application credential config; with neither, Method stays Env.
func FromEnv(getenv func(string) string) Config {
	c := Config{
		Method:                      Env,
		AuthURL:                     getenv("OS_AUTH_URL"),
		Username:                    getenv("OS_USERNAME"),
		UserID:                      first(getenv("OS_USER_ID"), getenv("OS_USERID")),
		Password:                    getenv("OS_PASSWORD"),
		UserDomainName:              first(getenv("OS_USER_DOMAIN_NAME"), getenv("OS_DOMAIN_NAME")),
		UserDomainID:                first(getenv("OS_USER_DOMAIN_ID"), getenv("OS_DOMAIN_ID")),
		ProjectName:                 first(getenv("OS_PROJECT_NAME"), getenv("OS_TENANT_NAME")),
		ProjectID:                   first(getenv("OS_PROJECT_ID"), getenv("OS_TENANT_ID")),
		ProjectDomainName:           first(getenv("OS_PROJECT_DOMAIN_NAME"), getenv("OS_DOMAIN_NAME")),
		ProjectDomainID:             first(getenv("OS_PROJECT_DOMAIN_ID"), getenv("OS_DOMAIN_ID")),
		ApplicationCredentialID:     getenv("OS_APPLICATION_CREDENTIAL_ID"),
		ApplicationCredentialName:   getenv("OS_APPLICATION_CREDENTIAL_NAME"),
		ApplicationCredentialSecret: getenv("OS_APPLICATION_CREDENTIAL_SECRET"),
		Region:                      getenv("OS_REGION_NAME"),
		Interface:                   strings.TrimSuffix(getenv("OS_INTERFACE"), "URL"),
		CACert:                      getenv("OS_CACERT"),
	}
	switch {
	case getenv("OS_CLOUD") != "":
		c.Method, c.Cloud = Cloud, getenv("OS_CLOUD")
	case c.AuthURL == "":
	case getenv("OS_AUTH_TYPE") == "v3applicationcredential" || c.ApplicationCredentialSecret != "":
		c.Method = ApplicationCredential
	default:
		c.Method = Password
	}
	return c
}

func endpointOpts(region, iface string) (gophercloud.EndpointOpts, error) {
	eo := gophercloud.EndpointOpts{Region: region, Availability: gophercloud.AvailabilityPublic}
	switch strings.TrimSuffix(iface, "URL") {
	case "", "public":
	case "internal":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin":
		eo.Availability = gophercloud.AvailabilityAdmin
	default:
		return eo, fmt.Errorf("auth.interface %q: want public, internal or admin", iface)
	}
	return eo, nil
}

func caBundle(path string) (*tls.Config, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth.cacert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("auth.cacert %s: no PEM certificate in it", path)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// domain defaults to Keystone's default domain, as most clouds keep
// service users there.
func domain(name, id string) (string, string) {
	if name == "" && id == "" {
		return "", "default"
	}
	return name, id
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
