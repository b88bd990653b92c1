package fleet_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/hwtest/hwtest/fleet"
	"github.com/hwtest/hwtest/result"
)

// The fleet's password in these tests: no message may contain it.
const secret = "s3cret-Pa55"

var testCreds = &fleet.Credentials{User: "hwtest", Password: secret}

// noSecret fails the test when text shows the password.
func noSecret(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Errorf("%s shows the password: %q", what, text)
	}
}

// credentialsFile writes "user:password" in a file only its owner can read.
func credentialsFile(t *testing.T, c *fleet.Credentials) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(f, []byte(c.User+":"+c.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// clearCredentialsEnv keeps the environment of whoever runs the tests out of them.
func clearCredentialsEnv(t *testing.T) {
	for _, k := range []string{fleet.UserEnv, fleet.PasswordEnv, fleet.CredentialsFileEnv} {
		t.Setenv(k, "")
	}
}

func startServerWith(t *testing.T, o fleet.ServerOptions) *fleet.Server {
	t.Helper()
	if o.StoreDir == "" {
		o.StoreDir = t.TempDir()
	}
	s, err := fleet.StartServer(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connectWith(t testing.TB, o fleet.ConnectOptions) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	o.Name = t.Name()
	nc, err := fleet.Connect(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// The default is this machine only; any other address needs credentials.
func TestListenBeyondLoopbackNeedsCredentials(t *testing.T) {
	host, _, err := net.SplitHostPort(fleet.DefaultListen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Errorf("DefaultListen %s is not a loopback address", fleet.DefaultListen)
	}
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		s, err := fleet.StartServer(fleet.ServerOptions{Listen: listen, StoreDir: t.TempDir()})
		if err == nil {
			s.Shutdown()
			t.Errorf("--listen %s without credentials: started, want refused", listen)
			continue
		}
		for _, fix := range []string{"reachable from other machines", "--credentials FILE", "$" + fleet.UserEnv, "--tls-cert"} {
			if !strings.Contains(err.Error(), fix) {
				t.Errorf("--listen %s: %q does not say %q", listen, err, fix)
			}
		}
	}
	s := startServerWith(t, fleet.ServerOptions{Listen: "0.0.0.0:0", Credentials: testCreds})
	if !strings.HasPrefix(s.URL, "nats://127.0.0.1:") {
		t.Errorf("URL %s, want nats://127.0.0.1:PORT", s.URL)
	}
	connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: testCreds})
}

// Port 0 is any free port, as for net.Listen (NATS itself reads 0 as 4222): tests
// in several checkouts at once, and two servers here, do not take each other's port.
func TestPortZeroIsAnyFreePort(t *testing.T) {
	a := startServerWith(t, fleet.ServerOptions{Listen: "127.0.0.1:0"})
	b := startServerWith(t, fleet.ServerOptions{Listen: "127.0.0.1:0"})
	if a.URL == b.URL || strings.HasSuffix(a.URL, ":4222") {
		t.Errorf("servers at %s and %s, want two free ports", a.URL, b.URL)
	}
}

// A server with credentials refuses clients without them or with a wrong password,
// and says how to give them; no error shows a password.
func TestServerRefusesClientsWithoutCredentials(t *testing.T) {
	s := startServerWith(t, fleet.ServerOptions{Listen: "127.0.0.1:0", Credentials: testCreds})

	_, err := fleet.Connect(fleet.ConnectOptions{URL: s.URL})
	if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), "the server wants credentials (--credentials FILE, or $"+fleet.UserEnv+" and $"+fleet.PasswordEnv+")") {
		t.Errorf("without credentials: %v; want refused, saying how to give them", err)
	}

	wrong := &fleet.Credentials{User: "hwtest", Password: secret + "-wrong"}
	_, err = fleet.Connect(fleet.ConnectOptions{URL: s.URL, Credentials: wrong})
	if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), "the server refused user hwtest (password not shown)") {
		t.Errorf("wrong password: %v; want refused", err)
	} else {
		noSecret(t, "the error of a wrong password", err.Error())
	}

	// Credentials in the URL, which nats.go also takes, are not repeated in the
	// error, which still names the server.
	hostPort := strings.TrimPrefix(s.URL, "nats://")
	for _, c := range []struct{ url, want string }{
		{"nats://hwtest:" + secret + "-wrong@" + hostPort, "connecting to nats://hwtest:xxxxx@" + hostPort + ": nats: Authorization Violation: the server refused the credentials in the URL"},
		{"nats://" + secret + "@" + hostPort, "connecting to nats://xxxxx@" + hostPort + ": nats: Authorization Violation: the server refused the credentials in the URL"},
		{"nats://hwtest:" + secret + "@127.0.0.1:1,nats://" + secret + "@127.0.0.1:2", "connecting to nats://hwtest:xxxxx@127.0.0.1:1,nats://xxxxx@127.0.0.1:2: nats: no servers available for connection"},
	} {
		_, err := fleet.Connect(fleet.ConnectOptions{URL: c.url})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		} else {
			noSecret(t, "the error of credentials in the URL", err.Error())
		}
	}

	_, js := connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: testCreds})
	if err := fleet.Setup(context.Background(), js); err != nil {
		t.Errorf("with the right credentials: %v", err)
	}
}

// A worker process without credentials exits with the server's refusal and never
// announces itself; given the credentials file, it takes jobs.
func TestWorkerProcessNeedsCredentials(t *testing.T) {
	clearCredentialsEnv(t)
	s := startServerWith(t, fleet.ServerOptions{Listen: "127.0.0.1:0", Credentials: testCreds})
	bin := workerBinary(t)

	wrongFile := credentialsFile(t, &fleet.Credentials{User: "hwtest", Password: secret + "-wrong"})
	for _, c := range []struct {
		id, want string
		args     []string
	}{
		{"no-creds", "the server wants credentials", nil},
		{"wrong-creds", "the server refused user hwtest", []string{"--credentials", wrongFile}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, bin, append([]string{"--nats", s.URL, "--id", c.id}, c.args...)...).CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() <= 0 {
			t.Errorf("worker %s: %v, want a non-zero exit; output:\n%s", c.id, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("worker %s said %q, want %q", c.id, out, c.want)
		}
		noSecret(t, "worker "+c.id+"'s output", string(out))
	}

	// The refused workers are not in the workers' bucket.
	_, js := connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: testCreds})
	ctx := context.Background()
	if err := fleet.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, fleet.WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"no-creds", "wrong-creds"} {
		if _, err := kv.Get(ctx, id); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("worker %s: announced (%v), want never", id, err)
		}
	}

	newPool(t, s.URL, 1, "--credentials", credentialsFile(t, testCreds))
	nc, js := connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: testCreds})
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := (&fleet.Submitter{JS: js, NC: nc, WaitWorkers: 10 * time.Second}).Run(runCtx,
		fleet.Plan{Run: "creds", Models: models(3), Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"})
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range cellsByKey(t, out.Cells) {
		if c.Status != result.StatusPass || !strings.Contains(c.Checks[0].Reason, "w0") {
			t.Errorf("%s: %s %q, want pass run by w0", k, c.Status, c.Reason)
		}
	}
	if out.PerWorker["w0"] != 3 {
		t.Errorf("jobs per worker %v, want 3 by w0", out.PerWorker)
	}
}

// tlsFiles makes a CA and a certificate for 127.0.0.1 signed by it: PEM files ca,
// cert and key in a folder of the test's.
func tlsFiles(t *testing.T) (ca, cert, key string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hwtest test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", srvDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// With a certificate the server speaks TLS only: a client that trusts its CA
// connects, one that does not is refused, and so is plaintext.
func TestTLS(t *testing.T) {
	ca, cert, key := tlsFiles(t)
	if _, err := fleet.StartServer(fleet.ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), TLSCert: cert}); err == nil || !strings.Contains(err.Error(), "both --tls-cert and --tls-key") {
		t.Errorf("a certificate without its key: %v, want refused", err)
	}
	// What a fleet across machines runs: every address, credentials and TLS.
	s := startServerWith(t, fleet.ServerOptions{Listen: "0.0.0.0:0", Credentials: testCreds, TLSCert: cert, TLSKey: key})
	if !strings.HasPrefix(s.URL, "tls://127.0.0.1:") {
		t.Fatalf("URL %s, want tls://127.0.0.1:PORT", s.URL)
	}

	// A worker process and a submitter that trust the CA run jobs over TLS.
	clearCredentialsEnv(t)
	newPool(t, s.URL, 1, "--credentials", credentialsFile(t, testCreds), "--tls-ca", ca)
	nc, js := connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: testCreds, TLSCA: ca})
	if st, err := nc.TLSConnectionState(); err != nil || !st.HandshakeComplete {
		t.Errorf("connection with the CA is not TLS: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := (&fleet.Submitter{JS: js, NC: nc, WaitWorkers: 10 * time.Second}).Run(ctx,
		fleet.Plan{Run: "tls", Models: models(2), Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"})
	if err != nil {
		t.Fatal(err)
	}
	if out.PerWorker["w0"] != 2 {
		t.Errorf("jobs per worker %v, want 2 by w0 over TLS", out.PerWorker)
	}

	// Without the CA, the certificate is not trusted, by either scheme: nats.go
	// upgrades a nats:// URL to TLS when the server requires it.
	for _, u := range []string{s.URL, strings.Replace(s.URL, "tls://", "nats://", 1)} {
		_, err := fleet.Connect(fleet.ConnectOptions{URL: u, Credentials: testCreds})
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			t.Errorf("%s without the CA: %v, want x509.UnknownAuthorityError", u, err)
		}
	}

	// A client that does not speak TLS gets no answer to its PING.
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL, "tls://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Errorf("INFO %q (%v), want tls_required", info, err)
	}
	if _, err := conn.Write([]byte(`CONNECT {"verbose":false,"user":"hwtest","pass":"` + secret + `"}` + "\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	rest, err := r.ReadString('\n')
	if strings.Contains(rest, "PONG") {
		t.Errorf("a plaintext client got %q, want refused", rest)
	}
	t.Logf("plaintext client: read %q, %v", rest, err)
}

// LoadCredentials: the file only its owner can read, else the environment, both
// or neither; the password is in none of its messages.
func TestLoadCredentials(t *testing.T) {
	clearCredentialsEnv(t)
	f := credentialsFile(t, testCreds)
	c, err := fleet.LoadCredentials(f)
	if err != nil || c.User != "hwtest" || c.Password != secret {
		t.Errorf("from %s: %v, %v", f, c, err)
	}
	noSecret(t, "Credentials.String()", c.String())
	if !strings.Contains(c.String(), "hwtest") {
		t.Errorf("String() %q does not name the user", c.String())
	}

	if err := os.Chmod(f, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = fleet.LoadCredentials(f)
	if err == nil || !strings.Contains(err.Error(), "chmod 600 "+f) {
		t.Errorf("a file others can read: %v, want refused with the chmod", err)
	} else {
		noSecret(t, "the error of a readable file", err.Error())
	}

	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = fleet.LoadCredentials(bad)
	if err == nil || !strings.Contains(err.Error(), `want one line, "user:password" or an nkey user seed`) {
		t.Errorf("a file without a colon: %v, want refused", err)
	} else {
		noSecret(t, "the error of a malformed file", err.Error())
	}

	if c, err := fleet.LoadCredentials(""); c != nil || err != nil {
		t.Errorf("nothing set: %v, %v; want none", c, err)
	}
	t.Setenv(fleet.CredentialsFileEnv, credentialsFile(t, testCreds))
	if c, err := fleet.LoadCredentials(""); err != nil || c.Password != secret {
		t.Errorf("from $%s: %v, %v", fleet.CredentialsFileEnv, c, err)
	}
	t.Setenv(fleet.CredentialsFileEnv, "")

	t.Setenv(fleet.UserEnv, "hwtest")
	_, err = fleet.LoadCredentials("")
	if err == nil || !strings.Contains(err.Error(), "set both") {
		t.Errorf("only $%s: %v, want both or neither", fleet.UserEnv, err)
	}
	t.Setenv(fleet.UserEnv, "")
	t.Setenv(fleet.PasswordEnv, secret)
	_, err = fleet.LoadCredentials("")
	if err == nil || !strings.Contains(err.Error(), "set both") {
		t.Errorf("only $%s: %v, want both or neither", fleet.PasswordEnv, err)
	} else {
		noSecret(t, "the error of a password without a user", err.Error())
	}
	t.Setenv(fleet.UserEnv, "hwtest")
	if c, err := fleet.LoadCredentials(""); err != nil || c.User != "hwtest" || c.Password != secret {
		t.Errorf("from $%s and $%s: %v, %v", fleet.UserEnv, fleet.PasswordEnv, c, err)
	}
}

// nkeySeedFile makes an nkey user and writes its seed in a file only its owner can read.
func nkeySeedFile(t *testing.T) (file, seed string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	b, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(file, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, string(b)
}

// An nkey seed file in place of "user:password": the server knows only the public
// key; another nkey, a password or nothing is refused; the seed is never shown.
func TestNkeyCredentials(t *testing.T) {
	clearCredentialsEnv(t)
	file, seed := nkeySeedFile(t)
	c, err := fleet.LoadCredentials(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Seed != seed || !strings.HasPrefix(c.User, "U") || c.Password != "" {
		t.Errorf("loaded user %q, want the seed's public key, no password", c.User)
	}
	if strings.Contains(c.String(), seed) || !strings.Contains(c.String(), c.User) {
		t.Errorf("String() %q: want the public key, not the seed", c.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.nk")
	flipped := byte('A')
	if seed[10] == 'A' {
		flipped = 'B'
	}
	damaged := seed[:10] + string(flipped) + seed[11:]
	if err := os.WriteFile(bad, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.LoadCredentials(bad); err == nil || !strings.Contains(err.Error(), "not an nkey user seed") || strings.Contains(err.Error(), damaged) {
		t.Errorf("a damaged seed: %v, want refused without showing it", err)
	}

	s := startServerWith(t, fleet.ServerOptions{Listen: "0.0.0.0:0", Credentials: c})
	connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: c})

	otherFile, otherSeed := nkeySeedFile(t)
	other, err := fleet.LoadCredentials(otherFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, refused := range []struct {
		name  string
		creds *fleet.Credentials
		want  string
	}{
		{"another nkey", other, "the server refused nkey " + other.User + " (seed not shown)"},
		{"a password", testCreds, "the server refused user hwtest"},
		{"nothing", nil, "the server wants credentials"},
	} {
		_, err := fleet.Connect(fleet.ConnectOptions{URL: s.URL, Credentials: refused.creds})
		if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), refused.want) {
			t.Errorf("%s: %v, want refused: %q", refused.name, err, refused.want)
		} else if strings.Contains(err.Error(), otherSeed) || strings.Contains(err.Error(), seed) {
			t.Errorf("%s: %q shows a seed", refused.name, err)
		}
	}

	// A worker process given the seed file takes jobs.
	newPool(t, s.URL, 1, "--credentials", file)
	nc, js := connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: c})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := (&fleet.Submitter{JS: js, NC: nc, WaitWorkers: 10 * time.Second}).Run(ctx,
		fleet.Plan{Run: "nkey", Models: models(2), Targets: []string{"cpu"}, CatalogSHA256: "test-catalog"})
	if err != nil {
		t.Fatal(err)
	}
	if out.PerWorker["w0"] != 2 {
		t.Errorf("jobs per worker %v, want 2 by w0", out.PerWorker)
	}
}

// `hwtest serve` reaches its own embedded server in process: its TLS certificate
// names the machine (queue.lan), not the 127.0.0.1 of the URL it dials, and it
// need not be given the CA of its own certificate.
func TestServeConnectsToItsOwnServerInProcess(t *testing.T) {
	_, cert, key := tlsFiles(t)
	s := startServerWith(t, fleet.ServerOptions{Listen: "0.0.0.0:0", Credentials: testCreds, TLSCert: cert, TLSKey: key})
	if _, err := fleet.Connect(fleet.ConnectOptions{URL: s.URL, Credentials: testCreds}); err == nil {
		t.Fatal("a network client without the CA connected: the test shows nothing")
	}
	nc, js := connectWith(t, fleet.ConnectOptions{URL: s.URL, Credentials: testCreds, InProcess: s})
	if err := fleet.Setup(context.Background(), js); err != nil {
		t.Errorf("in process: %v", err)
	}
	_ = nc
}
