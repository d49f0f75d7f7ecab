package arenadata

import (
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The compose-stack profiles' files, in requests/ (and the token and production-stack's
// cache files at the top of the tree).
const (
	// GatewayURIs is the URI list of gateway-64 and gateway-h3: 6 static files, 4 sums, 7
	// json pairs and 3 async-db queries, 20 lines, all through the edge on 8443.
	GatewayURIs = "gateway-64-uris.txt"
	// ProductionReads is production-stack's read mix, ProductionReadCount URIs: 30% static
	// files, 10% /public/baseline, 50% /api/items/{1..10000}, 10% /api/me, in a fixed
	// pseudo-random order.
	ProductionReads = "production-stack-reads.txt"
	// ProductionWrites is production-stack's write list: POST /api/items/1 ... /api/items/20.
	ProductionWrites = "production-stack-writes.txt"
	// ProductionWriteBody is the JSON body every write posts.
	ProductionWriteBody = "production-stack-write-body.json"
	// JWTTokenFile is the bearer token production-stack's loads and checks send: an HS256
	// JWT signed with JWTSecret for user 42, expiring in 2100.
	JWTTokenFile = "jwt-token.txt"
	// RedisEntrypointFile is production-stack's cache entrypoint, which the arena's stacks
	// mount at /entrypoint.sh and run as sh /entrypoint.sh on redis:7-alpine: Redis with
	// no port until the seed (RedisSeedFile, at /seed.txt) is in, then 127.0.0.1:6379 (and
	// ::1 where there is one); a seed command that fails stops the container. No persistence.
	RedisEntrypointFile = "redis-entrypoint.sh"
	// RedisSeedFile is what RedisEntrypointFile loads: Redis inline commands, one a line
	// (redis-cli --pipe), setting user:<id> to the JSON of each row of the users table
	// ({"id":42,"name":"Arena Bench","email":"bench@example.com"}, what GET /api/me
	// answers), and nothing under item:, so a stack's first read of an item is a MISS, as
	// production-stack's checks want.
	RedisSeedFile = "redis-seed.txt"
)

// redisEntrypoint is RedisEntrypointFile's text.
//
//go:embed redis-entrypoint.sh
var redisEntrypoint string

// RedisSeedUser is the value RedisSeedFile sets under user:<ID>, a row of the users table.
type RedisSeedUser struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// RedisSeed returns the users RedisSeedFile sets, in file order.
func RedisSeed() []RedisSeedUser {
	users := make([]RedisSeedUser, len(dbUsers))
	for i, u := range dbUsers {
		users[i] = RedisSeedUser{ID: u.id, Name: u.name, Email: u.email}
	}
	return users
}

// writeRedisSeed writes RedisSeedFile: SET user:<id> '<json>' per user. The JSON goes in
// single quotes, which Redis's inline parser takes literally; the users' names and emails
// hold no quote or backslash (db.go), so it needs no escapes.
func writeRedisSeed(w io.Writer) error {
	for _, u := range RedisSeed() {
		b, err := json.Marshal(u)
		if err != nil {
			return err
		}
		if strings.ContainsAny(string(b), `'\`) {
			return fmt.Errorf("%s: user %d's JSON %s needs escaping", RedisSeedFile, u.ID, b)
		}
		if _, err := fmt.Fprintf(w, "SET user:%d '%s'\n", u.ID, b); err != nil {
			return err
		}
	}
	return nil
}

// JWTSecret is the key the stacks' authsvc checks tokens with (the arena's, public).
const JWTSecret = "httparena-bench-secret-do-not-use-in-production"

// ProductionReadCount is the number of URIs in ProductionReads.
const ProductionReadCount = 20000

// productionItems is how many items the reads spread over (/api/items/1..10000).
const productionItems = 10000

const edge = "https://localhost:8443"

// gatewayURIs are the 20 URIs of GatewayURIs.
func gatewayURIs() []string {
	var uris []string
	static := StaticFiles()
	for _, name := range static[:6] {
		uris = append(uris, edge+"/static/"+name)
	}
	for _, ab := range [][2]int{{1, 1}, {13, 42}, {7, 35}, {250, 750}} {
		uris = append(uris, fmt.Sprintf("%s/baseline2?a=%d&b=%d", edge, ab[0], ab[1]))
	}
	for _, p := range jsonPairs {
		uris = append(uris, fmt.Sprintf("%s/json/%d?m=%d", edge, p[0], p[1]))
	}
	for _, l := range []int{5, 20, 50} {
		uris = append(uris, fmt.Sprintf("%s/async-db?min=10&max=50&limit=%d", edge, l))
	}
	return uris
}

// productionReads are the URIs of ProductionReads, drawn from a fixed seed.
func productionReads() []string {
	r := newRNG("production-stack-reads")
	static := StaticFiles()
	uris := make([]string, 0, ProductionReadCount)
	for range ProductionReadCount {
		switch n := r.intn(100); {
		case n < 30:
			uris = append(uris, edge+"/static/"+static[r.intn(len(static))])
		case n < 40:
			uris = append(uris, fmt.Sprintf("%s/public/baseline?a=%d&b=%d", edge, r.between(1, 1000), r.between(1, 1000)))
		case n < 90:
			uris = append(uris, fmt.Sprintf("%s/api/items/%d", edge, r.between(1, productionItems)))
		default:
			uris = append(uris, edge+"/api/me")
		}
	}
	return uris
}

func productionWrites() []string {
	uris := make([]string, 20)
	for i := range uris {
		uris[i] = fmt.Sprintf("%s/api/items/%d", edge, i+1)
	}
	return uris
}

// JWTToken is the token of JWTTokenFile.
func JWTToken() string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := enc.EncodeToString([]byte(`{"sub":"42","name":"Alice Chen","exp":4102444800}`))
	mac := hmac.New(sha256.New, []byte(JWTSecret))
	io.WriteString(mac, head+"."+body)
	return head + "." + body + "." + enc.EncodeToString(mac.Sum(nil))
}

// stackFiles are the compose-stack profiles' files.
func stackFiles() []file {
	return []file{
		uriFile(GatewayURIs, gatewayURIs()),
		uriFile(ProductionReads, productionReads()),
		uriFile(ProductionWrites, productionWrites()),
		{RequestsDir + "/" + ProductionWriteBody, func(w io.Writer) error {
			_, err := io.WriteString(w, `{"name":"bench-updated","price":250,"quantity":10}`)
			return err
		}},
		{JWTTokenFile, func(w io.Writer) error {
			_, err := io.WriteString(w, strings.TrimSpace(JWTToken())+"\n")
			return err
		}},
		{RedisSeedFile, writeRedisSeed},
		{RedisEntrypointFile, func(w io.Writer) error {
			_, err := io.WriteString(w, redisEntrypoint)
			return err
		}},
	}
}
