package validate

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arenabot/arenabot/text"
)

// The TLS quality check offers what the server must refuse in ClientHellos of its own
// making: crypto/tls cannot offer SSLv3 or the NULL, anonymous, EXPORT and DES suites at all.
// A refusing server answers with an alert or closes; one that accepts answers with a
// ServerHello naming the protocol version and the cipher suite it chose, which is all the
// check reads (it never completes the handshake).

// TLS protocol versions on the wire.
const (
	wireSSL30 = 0x0300
	wireTLS10 = 0x0301
	wireTLS11 = 0x0302
	wireTLS12 = 0x0303
)

// legacySuites are offered in the SSLv3, TLS 1.0 and TLS 1.1 hellos: the CBC suites those
// versions have, for ECDSA and RSA certificates, so a server that speaks the version at all
// finds one it can use.
var legacySuites = []uint16{
	0xc009, 0xc00a, // TLS_ECDHE_ECDSA_WITH_AES_{128,256}_CBC_SHA
	0xc013, 0xc014, // TLS_ECDHE_RSA_WITH_AES_{128,256}_CBC_SHA
	0x0033, 0x0039, // TLS_DHE_RSA_WITH_AES_{128,256}_CBC_SHA
	0x002f, 0x0035, // TLS_RSA_WITH_AES_{128,256}_CBC_SHA
	0x000a, // TLS_RSA_WITH_3DES_EDE_CBC_SHA
}

// A weakFamily is a cipher family the server must refuse, with its suites (IANA TLS Cipher
// Suites registry), offered alone in a TLS 1.2 hello.
type weakFamily struct {
	name   string
	suites []uint16
}

var weakFamilies = []weakFamily{
	{"NULL", []uint16{0x0001, 0x0002, 0x003b, 0xc006, 0xc010, 0xc015}},                                  // RSA_WITH_NULL_{MD5,SHA,SHA256}, ECDHE_{ECDSA,RSA}_WITH_NULL_SHA, ECDH_anon_WITH_NULL_SHA
	{"aNULL", []uint16{0x0018, 0x001b, 0x0034, 0x003a, 0x00a6, 0x00a7, 0xc016, 0xc017, 0xc018, 0xc019}}, // DH_anon_* and ECDH_anon_* (RC4, 3DES, AES CBC, AES GCM)
	{"EXPORT", []uint16{0x0003, 0x0006, 0x0008, 0x000e, 0x0011, 0x0014, 0x0017, 0x0019}},                // *_EXPORT_WITH_{RC4_40,RC2_CBC_40,DES40_CBC}
	{"RC4", []uint16{0x0004, 0x0005, 0xc007, 0xc011}},                                                   // RSA_WITH_RC4_128_{MD5,SHA}, ECDHE_{ECDSA,RSA}_WITH_RC4_128_SHA
	{"DES", []uint16{0x0009, 0x000c, 0x000f, 0x0012, 0x0015}},                                           // {RSA,DH_DSS,DH_RSA,DHE_DSS,DHE_RSA}_WITH_DES_CBC_SHA
	{"3DES", []uint16{0x000a, 0x0010, 0x0013, 0x0016, 0xc008, 0xc012}},                                  // {RSA,DH_RSA,DHE_DSS,DHE_RSA,ECDHE_ECDSA,ECDHE_RSA}_WITH_3DES_EDE_CBC_SHA
}

// A helloProbe is one ClientHello the quality check sends.
type helloProbe struct {
	what    string // "SSLv3", "the RC4 family"
	version uint16
	suites  []uint16
}

func qualityProbes() []helloProbe {
	probes := []helloProbe{
		{"SSLv3", wireSSL30, legacySuites},
		{"TLS 1.0", wireTLS10, legacySuites},
		{"TLS 1.1", wireTLS11, legacySuites},
	}
	for _, f := range weakFamilies {
		probes = append(probes, helloProbe{"the " + f.name + " cipher family", wireTLS12, f.suites})
	}
	return probes
}

// qualityCheck sends each probe on a connection of its own and fails on every one the server
// accepts.
func qualityCheck(ctx context.Context, e *env) result {
	probes := qualityProbes()
	var names []string
	for _, p := range probes {
		names = append(names, p.what)
	}
	req := "a ClientHello offering each alone: " + strings.Join(names, ", ")
	const exp = "every one refused (an alert or a close)"
	var accepted []string
	for _, p := range probes {
		acc, err := e.hello(ctx, p)
		if err != nil {
			return failed(req, exp, p.what+": "+err.Error())
		}
		if acc != "" {
			accepted = append(accepted, p.what+" ("+acc+")")
		}
	}
	if len(accepted) > 0 {
		return failed(req, exp, "accepted: "+strings.Join(accepted, "; "))
	}
	return passed(req, exp, fmt.Sprintf("all %d refused", len(probes)))
}

// hello sends the probe's ClientHello and reads the answer. It returns what the server
// accepted ("ServerHello TLS 1.0, suite 0xc009"), or "" when it refused; an error only when the
// server could not be reached.
func (e *env) hello(ctx context.Context, p helloProbe) (string, error) {
	nc, err := dialTCP(ctx, e)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	nc.SetDeadline(time.Now().Add(e.timeout))
	if _, err := nc.Write(clientHello(p.version, p.suites)); err != nil {
		return "", nil // closed on us: refused
	}
	version, suite, ok := readServerHello(nc)
	switch {
	case !ok:
		return "", nil
	case p.version < wireTLS12 && version >= wireTLS12:
		return "", nil // answered with a version it was not offered: that one is refused
	case p.version < wireTLS12:
		return fmt.Sprintf("ServerHello %s, suite %#04x", wireVersionName(version), suite), nil
	case slices.Contains(p.suites, suite):
		return fmt.Sprintf("ServerHello %s, suite %#04x", wireVersionName(version), suite), nil
	}
	return "", nil
}

func wireVersionName(v uint16) string {
	switch v {
	case wireSSL30:
		return "SSLv3"
	case wireTLS10:
		return "TLS 1.0"
	case wireTLS11:
		return "TLS 1.1"
	case wireTLS12:
		return "TLS 1.2"
	}
	return fmt.Sprintf("version %#04x", v)
}

// clientHello builds a ClientHello record (RFC 5246 §7.4.1.2) of the given version offering
// suites, with SNI localhost, the usual curves and point format, signature algorithms and
// the renegotiation_info extension (RFC 5746), as a client of that era would send.
func clientHello(version uint16, suites []uint16) []byte {
	var body []byte
	body = binary.BigEndian.AppendUint16(body, version)
	random := make([]byte, 32)
	rand.Read(random)
	body = append(body, random...)
	body = append(body, 0) // no session ID
	body = binary.BigEndian.AppendUint16(body, uint16(2*len(suites)))
	for _, s := range suites {
		body = binary.BigEndian.AppendUint16(body, s)
	}
	body = append(body, 1, 0) // compression: null only

	var exts []byte
	ext := func(typ uint16, data []byte) {
		exts = binary.BigEndian.AppendUint16(exts, typ)
		exts = binary.BigEndian.AppendUint16(exts, uint16(len(data)))
		exts = append(exts, data...)
	}
	const host = "localhost"
	sni := binary.BigEndian.AppendUint16(nil, uint16(3+len(host)))
	sni = append(sni, 0) // host_name
	sni = binary.BigEndian.AppendUint16(sni, uint16(len(host)))
	ext(0x0000, append(sni, host...))
	ext(0x000a, []byte{0, 6, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x18}) // supported_groups: x25519, P-256, P-384
	ext(0x000b, []byte{1, 0})                                     // ec_point_formats: uncompressed
	if version >= wireTLS12 {
		sigs := []uint16{0x0403, 0x0503, 0x0804, 0x0805, 0x0401, 0x0501, 0x0203, 0x0201}
		b := binary.BigEndian.AppendUint16(nil, uint16(2*len(sigs)))
		for _, s := range sigs {
			b = binary.BigEndian.AppendUint16(b, s)
		}
		ext(0x000d, b) // signature_algorithms
	}
	ext(0xff01, []byte{0}) // renegotiation_info, empty
	body = binary.BigEndian.AppendUint16(body, uint16(len(exts)))
	body = append(body, exts...)

	hs := []byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))} // client_hello
	hs = append(hs, body...)
	recVersion := uint16(wireTLS10) // what clients put on the record of a hello
	if version == wireSSL30 {
		recVersion = wireSSL30
	}
	rec := []byte{22}
	rec = binary.BigEndian.AppendUint16(rec, recVersion)
	rec = binary.BigEndian.AppendUint16(rec, uint16(len(hs)))
	return append(rec, hs...)
}

// maxHandshakeRecord bounds a record the check reads (RFC 5246 §6.2.1: 2^14 plus expansion).
const maxHandshakeRecord = 1<<14 + 2048

// readServerHello reads the server's first record and, when it is a handshake record starting
// with a ServerHello, returns its version and cipher suite. An alert, a close, a timeout or
// anything else is ok false: no ServerHello.
func readServerHello(r io.Reader) (version, suite uint16, ok bool) {
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return 0, 0, false
	}
	n := int(binary.BigEndian.Uint16(hdr[3:5]))
	if hdr[0] != 22 || n < 4 || n > maxHandshakeRecord {
		return 0, 0, false // an alert (21), or not TLS
	}
	rec := make([]byte, n)
	if _, err := io.ReadFull(r, rec); err != nil {
		return 0, 0, false
	}
	if rec[0] != 2 { // server_hello
		return 0, 0, false
	}
	b := rec[4:]
	if len(b) < 2+32+1 {
		return 0, 0, false
	}
	version = binary.BigEndian.Uint16(b)
	sid := int(b[34])
	if len(b) < 35+sid+2 {
		return 0, 0, false
	}
	return version, binary.BigEndian.Uint16(b[35+sid:]), true
}

// testsslNames are the names testssl.sh is installed under: Debian's package has testssl,
// the project's own checkout testssl.sh.
var testsslNames = []string{"testssl", "testssl.sh"}

// testsslTimeout bounds one testssl.sh -U run (it took 106 s against a Go server on a busy
// 2-core machine).
const testsslTimeout = 5 * time.Minute

// testsslCheck runs testssl.sh -U against the section's address, where it is installed, and
// fails on any finding of severity HIGH or CRITICAL.
func testsslCheck(ctx context.Context, e *env) result {
	bin := ""
	for _, name := range testsslNames {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return result{status: Skip, reason: "testssl.sh is not installed on this host (Debian: apt-get install testssl.sh)"}
	}
	dir, err := os.MkdirTemp("", "arenabot-testssl-")
	if err != nil {
		return failed("testssl.sh -U", "", "cannot run it: "+err.Error())
	}
	defer os.RemoveAll(dir)
	jsonFile := filepath.Join(dir, "findings.json")
	args := []string{"--quiet", "--color", "0", "--warnings", "off", "-U", "--jsonfile", jsonFile, e.addr}
	req := "testssl -U --jsonfile … " + e.addr
	const exp = "a scan with no finding of severity HIGH or CRITICAL"
	rctx, cancel := context.WithTimeout(ctx, testsslTimeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, args...)
	out, err := cmd.CombinedOutput()
	b, rerr := os.ReadFile(jsonFile)
	if rerr != nil {
		if err == nil {
			err = rerr
		}
		return failed(req, exp, fmt.Sprintf("testssl.sh wrote no findings (%v): %s", err, text.CutNoting(strings.TrimSpace(string(out)), 300)))
	}
	bad, total, perr := severeFindings(b)
	if perr != nil {
		return failed(req, exp, "cannot read its findings: "+perr.Error())
	}
	if len(bad) > 0 {
		return failed(req, exp, strings.Join(bad, "; "))
	}
	return passed(req, exp, fmt.Sprintf("%d findings, none HIGH or CRITICAL", total))
}

// A testsslFinding is one entry of testssl.sh's --jsonfile output (a JSON array).
type testsslFinding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Finding  string `json:"finding"`
}

// severeFindings returns the HIGH and CRITICAL findings of testssl.sh's JSON output as
// "id (SEVERITY): finding", and how many findings it holds. A FATAL one (testssl.sh could not
// scan, e.g. nothing answered) is severe too: the check then says why.
func severeFindings(b []byte) (bad []string, total int, err error) {
	var fs []testsslFinding
	if err := json.Unmarshal(b, &fs); err != nil {
		return nil, 0, err
	}
	for _, f := range fs {
		if f.Severity == "HIGH" || f.Severity == "CRITICAL" || f.Severity == "FATAL" {
			bad = append(bad, fmt.Sprintf("%s (%s): %s", f.ID, f.Severity, f.Finding))
		}
	}
	return bad, len(fs), nil
}
