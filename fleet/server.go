package fleet

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// DefaultListen is where `hwtest serve` listens: this machine only.
const DefaultListen = "127.0.0.1:4222"

// Environment variables holding the fleet's credentials, so they need not be on a
// command line (where ps shows them). Never logged.
const (
	UserEnv            = "HWTEST_NATS_USER"
	PasswordEnv        = "HWTEST_NATS_PASSWORD"
	CredentialsFileEnv = "HWTEST_NATS_CREDENTIALS" // a file holding "user:password" or an nkey user seed
)

// Credentials are a NATS user and password, or an nkey.
type Credentials struct {
	User     string
	Password string
	// Seed is an nkey user seed ("SU…") in place of a password; User is then its
	// public key. The server is sent only a signature of its nonce, never the seed.
	Seed string
}

// String never shows the password or the seed.
func (c *Credentials) String() string {
	switch {
	case c == nil:
		return "no credentials"
	case c.Seed != "":
		return "nkey " + c.User + " (seed not shown)"
	}
	return "user " + c.User + " (password not shown)"
}

// LoadCredentials reads the credentials from file (one line, "user:password" or
// an nkey user seed as `nk -gen user` writes it; a file only its owner can read),
// else from $HWTEST_NATS_CREDENTIALS naming such a file, else from
// $HWTEST_NATS_USER and $HWTEST_NATS_PASSWORD; nil when none is set.
func LoadCredentials(file string) (*Credentials, error) {
	if file == "" {
		file = os.Getenv(CredentialsFileEnv)
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
		if st, err := os.Stat(file); err == nil && st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("credentials: %s can be read by others (mode %v): chmod 600 %s", file, st.Mode().Perm(), file)
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "SU") && !strings.Contains(line, ":") {
			return nkeyCredentials(file, line)
		}
		user, pass, ok := strings.Cut(line, ":")
		if !ok || user == "" || pass == "" {
			return nil, fmt.Errorf("credentials: %s: want one line, \"user:password\" or an nkey user seed (SU…)", file)
		}
		return &Credentials{User: user, Password: pass}, nil
	}
	user, pass := os.Getenv(UserEnv), os.Getenv(PasswordEnv)
	switch {
	case user == "" && pass == "":
		return nil, nil
	case user == "" || pass == "":
		return nil, fmt.Errorf("credentials: set both %s and %s, or neither", UserEnv, PasswordEnv)
	}
	return &Credentials{User: user, Password: pass}, nil
}

func nkeyCredentials(file, seed string) (*Credentials, error) {
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return nil, fmt.Errorf("credentials: %s: not an nkey user seed: %w", file, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("credentials: %s: %w", file, err)
	}
	return &Credentials{User: pub, Seed: seed}, nil
}

// ServerOptions configure the embedded server of `hwtest serve`.
type ServerOptions struct {
	Listen   string // host:port; DefaultListen when empty
	StoreDir string // JetStream's files
	// Credentials are required of every client when Listen is not a loopback
	// address: the queue runs whatever jobs it is given on the workers' machines.
	Credentials *Credentials
	TLSCert     string // PEM files; both or neither
	TLSKey      string
	// MaxPayload bounds one message (a result with its raw samples); 8 MiB when 0.
	MaxPayload int32
}

// Server is an embedded NATS server with JetStream.
type Server struct {
	ns  *server.Server
	URL string
	tls bool // the server requires TLS
}

// StartServer starts the embedded server and waits until it takes connections.
func StartServer(o ServerOptions) (*Server, error) {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT, e.g. %s", o.Listen, DefaultListen)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--listen %q: the port must be a number from 0 to 65535", o.Listen)
	}
	if !isLoopback(host) && o.Credentials == nil {
		return nil, fmt.Errorf("--listen %s is reachable from other machines: give credentials (--credentials FILE with \"user:password\" or an nkey user seed, or $%s and $%s), and TLS (--tls-cert, --tls-key) unless the network is trusted", o.Listen, UserEnv, PasswordEnv)
	}
	if port == 0 {
		port = server.RANDOM_PORT // NATS reads port 0 as its default, 4222: take any free port, as net.Listen does
	}
	if port != 0 {
		// With no logger, nats-server would only time out on a port in use.
		l, err := net.Listen("tcp", net.JoinHostPort(host, portStr))
		if err != nil {
			return nil, fmt.Errorf("--listen %s: %w (another hwtest serve or NATS server?)", o.Listen, err)
		}
		l.Close()
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = 8 << 20
	}
	opts := &server.Options{
		Host: host, Port: port,
		JetStream: true, StoreDir: o.StoreDir,
		MaxPayload: o.MaxPayload,
		NoSigs:     true, // hwtest serve handles SIGINT/SIGTERM itself
		// No logger at all. Were one set, NATS still shows no password: its trace
		// of CONNECT says "pass":"[REDACTED]" (checked with Debug and Trace on).
		NoLog:      true,
		ServerName: "hwtest",
	}
	switch c := o.Credentials; {
	case c != nil && c.Seed != "":
		opts.Nkeys = []*server.NkeyUser{{Nkey: c.User}} // the public key: the seed stays with the clients
	case c != nil:
		opts.Username, opts.Password = c.User, c.Password
	}
	scheme := "nats"
	if o.TLSCert != "" || o.TLSKey != "" {
		if o.TLSCert == "" || o.TLSKey == "" {
			return nil, errors.New("TLS needs both --tls-cert and --tls-key")
		}
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		opts.TLS = true
		opts.TLSTimeout = 5
		scheme = "tls"
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("NATS server: not listening on %s after 30s (is the port in use?)", o.Listen)
	}
	addr := ns.Addr().(*net.TCPAddr)
	urlHost := host
	if urlHost == "" || urlHost == "0.0.0.0" || urlHost == "::" {
		urlHost = "127.0.0.1"
	}
	return &Server{ns: ns, tls: opts.TLS, URL: fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(urlHost, strconv.Itoa(addr.Port)))}, nil
}

// Shutdown stops the server; JetStream's files stay for the next start.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ConnectOptions say how a worker or a submitter reaches the fleet.
type ConnectOptions struct {
	URL         string
	Name        string // shown in the server's connection list
	Credentials *Credentials
	TLSCA       string // PEM file of the CA that signed the server's certificate
	// InProcess connects to this embedded server without the network: `hwtest
	// serve` reaching its own server, whose TLS certificate names the machine, not
	// 127.0.0.1.
	InProcess *Server
}

// Connect connects and keeps reconnecting for ever: a server restarted mid-run is
// waited for, not an error.
func Connect(o ConnectOptions) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
	}
	if o.InProcess != nil {
		opts = append(opts, nats.InProcessServer(o.InProcess.ns))
		if o.InProcess.tls {
			// The server asks its in-process clients for TLS too. The bytes go
			// through a pipe within this process to this process's own server:
			// there is no peer whose certificate could need checking.
			opts = append(opts, nats.Secure(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}))
		}
	}
	switch c := o.Credentials; {
	case c != nil && c.Seed != "":
		opts = append(opts, nats.Nkey(c.User, func(nonce []byte) ([]byte, error) {
			kp, err := nkeys.FromSeed([]byte(c.Seed))
			if err != nil {
				return nil, err
			}
			defer kp.Wipe()
			return kp.Sign(nonce)
		}))
	case c != nil:
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", o.TLSCA)
		}
		opts = append(opts, nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		url, inURL := redactURL(o.URL)
		hint := ""
		switch {
		case errors.Is(err, nats.ErrAuthorization) && o.Credentials != nil:
			hint = ": the server refused " + o.Credentials.String()
		case errors.Is(err, nats.ErrAuthorization) && inURL:
			hint = ": the server refused the credentials in the URL"
		case errors.Is(err, nats.ErrAuthorization):
			hint = fmt.Sprintf(": the server wants credentials (--credentials FILE, or $%s and $%s)", UserEnv, PasswordEnv)
		case errors.Is(err, nats.ErrNoServers):
			hint = ": is `hwtest serve` (or your NATS server) running there?"
		}
		return nil, fmt.Errorf("connecting to %s: %w%s", url, err, hint)
	}
	return nc, nil
}

// RedactURL is the server URL without the credentials it may hold, to show or store.
func RedactURL(urls string) string {
	r, _ := redactURL(urls)
	return r
}

// redactURL hides the credentials nats.go also takes in a server URL
// (nats://user:password@host, or nats://token@host), in each URL of a
// comma-separated list, so that an error can name the server; inURL says whether
// there were any.
func redactURL(urls string) (redacted string, inURL bool) {
	parts := strings.Split(urls, ",")
	for i, u := range parts {
		at := strings.LastIndex(u, "@")
		if at < 0 {
			continue
		}
		inURL = true
		start := 0
		if s := strings.Index(u, "://"); s >= 0 && s < at {
			start = s + len("://")
		}
		userinfo := "xxxxx" // a token
		if user, _, ok := strings.Cut(u[start:at], ":"); ok {
			userinfo = user + ":xxxxx"
		}
		parts[i] = u[:start] + userinfo + u[at:]
	}
	return strings.Join(parts, ","), inURL
}
