/* remote_sign.c: the remote cache's trust: Ed25519 keys (OpenSSL
 * libcrypto) and the signed action-cache entries. Whoever can write the
 * remote could make an entry name any artifact, so a reader takes an
 * entry only with a signature, by a trusted key, over the key, the
 * artifact id and the manifest's digest; what those name is then checked
 * by digest (remote.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "srv.h"
#include "digest.h"
#include "remote.h"

#define ENTRY_FORMAT "eulernpu-remote-ac"
#define ENTRY_VERSION 1
#define SIG_DOMAIN "eulernpu-ac-v1"

static int key_fail(enpu_err *e, const char *label, const char *fix, const char *what)
{
	return enpu_fail(e, ENPU_E_CONFIG, label, fix, "'%s': %s", label, what);
}

static EVP_PKEY *read_pem(const char *pem, size_t len, int priv)
{
	BIO *b;
	EVP_PKEY *k;

	if (len > SRV_RKEY_FILE_MAX || len > (size_t)INT32_MAX)
		return NULL;
	b = BIO_new_mem_buf(pem, (int)len);
	if (!b)
		return NULL;
	k = priv ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	BIO_free(b);
	return k;
}

/* k's raw public half into the trusted list (once). 0, or -1 + *e. */
static int trust_raw(srv_rkeys *k, EVP_PKEY *p, const char *label, enpu_err *e)
{
	unsigned char raw[32];
	size_t n = sizeof raw;

	if (EVP_PKEY_get_raw_public_key(p, raw, &n) != 1 || n != sizeof raw)
		return key_fail(e, label, NULL, "cannot read the Ed25519 public key");
	for (int i = 0; i < k->n_pub; i++)
		if (!memcmp(k->pub[i], raw, sizeof raw))
			return 0;
	if (k->n_pub == SRV_REMOTE_TRUST_MAX + 1)
		return enpu_fail(e, ENPU_E_CONFIG, label, "trust fewer keys",
				 "more than %d trusted keys", SRV_REMOTE_TRUST_MAX);
	memcpy(k->pub[k->n_pub++], raw, sizeof raw);
	return 0;
}

int srv_rkeys_add_private(srv_rkeys *k, const char *pem, size_t len, const char *label,
			  enpu_err *e)
{
	EVP_PKEY *p = read_pem(pem, len, 1);

	if (!p || EVP_PKEY_id(p) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(p);
		return key_fail(e, label, "make one with: openssl genpkey -algorithm ed25519 -out FILE",
				"not a PEM Ed25519 private key");
	}
	if (k->sign) {
		EVP_PKEY_free(p);
		return key_fail(e, label, NULL, "a second sign key");
	}
	/* its own public half first: the daemon trusts what it signed */
	if (k->n_pub == SRV_REMOTE_TRUST_MAX + 1) {
		EVP_PKEY_free(p);
		return key_fail(e, label, NULL, "too many keys");
	}
	memmove(k->pub[1], k->pub[0], (size_t)k->n_pub * sizeof k->pub[0]);
	k->n_pub++;
	{
		size_t n = 32;
		if (EVP_PKEY_get_raw_public_key(p, k->pub[0], &n) != 1 || n != 32) {
			memmove(k->pub[0], k->pub[1], (size_t)--k->n_pub * sizeof k->pub[0]);
			EVP_PKEY_free(p);
			return key_fail(e, label, NULL, "cannot derive the public key");
		}
	}
	k->sign = p;
	return 0;
}

int srv_rkeys_add_public(srv_rkeys *k, const char *pem, size_t len, const char *label,
			 enpu_err *e)
{
	EVP_PKEY *p = read_pem(pem, len, 0);
	int r;

	if (!p || EVP_PKEY_id(p) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(p);
		return key_fail(e, label, "give the public half: openssl pkey -in KEY -pubout -out FILE",
				"not a PEM Ed25519 public key");
	}
	r = trust_raw(k, p, label, e);
	EVP_PKEY_free(p);
	return r;
}

/* A key file's bytes: a regular file of at most SRV_RKEY_FILE_MAX bytes;
 * private: not open to others (srv_secret_file_private). */
static int read_key_file(const char *flag, const char *path, int priv, enpu_buf *b, enpu_err *e)
{
	char label[600];

	snprintf(label, sizeof label, "%s %s", flag, path);
	if (priv && srv_secret_file_private(path, "key file", e) != 0)
		return -1;
	if (enpu_read_file(path, SRV_RKEY_FILE_MAX, b, e) != 0) {
		e->code = ENPU_E_CONFIG;
		snprintf(e->where, sizeof e->where, "%.500s", label);
		return -1;
	}
	return 0;
}

int srv_rkeys_load(srv_rkeys *k, const char *sign_path, const char *const *trust, int n_trust,
		   enpu_err *e)
{
	enpu_buf b = ENPU_BUF_INIT;
	char label[600];
	int r = 0;

	if (sign_path) {
		snprintf(label, sizeof label, "--remote-cache-sign-key %s", sign_path);
		r = read_key_file("--remote-cache-sign-key", sign_path, 1, &b, e);
		if (r == 0)
			r = srv_rkeys_add_private(k, b.data ? b.data : "", b.len, label, e);
		enpu_buf_free(&b);
	}
	for (int i = 0; r == 0 && i < n_trust; i++) {
		snprintf(label, sizeof label, "--remote-cache-trust %s", trust[i]);
		r = read_key_file("--remote-cache-trust", trust[i], 0, &b, e);
		if (r == 0)
			r = srv_rkeys_add_public(k, b.data ? b.data : "", b.len, label, e);
		enpu_buf_free(&b);
	}
	return r;
}

void srv_rkeys_free(srv_rkeys *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->sign);
	memset(k, 0, sizeof *k);
}

/* Exactly 2n lowercase hex digits into n bytes. 0, or -1. */
static int hex_to(const char *s, unsigned char *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (v < 0)
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (unsigned char)(v << 4);
		else
			out[i / 2] |= (unsigned char)v;
	}
	return 0;
}

/* The bytes signed: the domain, then key, id and manifest, a line each. */
static void signed_text(const srv_rentry *en, char out[256])
{
	snprintf(out, 256, SIG_DOMAIN "\n%s\n%s\n%s\n", en->key, en->id, en->manifest);
}

int srv_rentry_make(const srv_rkeys *k, const srv_rentry *en, enpu_buf *out, enpu_err *e)
{
	char msg[256], sighex[129], pubhex[65];
	unsigned char sig[64];
	size_t siglen = sizeof sig;
	EVP_MD_CTX *md;
	json_object *o;
	int ok;

	if (!k->sign)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "no sign key");
	if (!enpu_is_sha256_hex(en->key) || !enpu_is_sha256_hex(en->id) ||
	    !enpu_is_sha256_hex(en->manifest))
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "an entry names digests");
	signed_text(en, msg);
	md = EVP_MD_CTX_new();
	ok = md && EVP_DigestSignInit(md, NULL, NULL, NULL, k->sign) == 1 &&
	     EVP_DigestSign(md, sig, &siglen, (const unsigned char *)msg, strlen(msg)) == 1 &&
	     siglen == sizeof sig;
	EVP_MD_CTX_free(md);
	if (!ok)
		return enpu_fail(e, ENPU_E_INTERNAL, NULL, NULL, "cannot sign an entry");
	enpu_hex(sig, sizeof sig, sighex);
	enpu_hex(k->pub[0], 32, pubhex);
	o = json_object_new_object();
	json_object_object_add(o, "format", json_object_new_string(ENTRY_FORMAT));
	json_object_object_add(o, "version", json_object_new_int(ENTRY_VERSION));
	json_object_object_add(o, "key", json_object_new_string(en->key));
	json_object_object_add(o, "artifact_id", json_object_new_string(en->id));
	json_object_object_add(o, "manifest", json_object_new_string(en->manifest));
	json_object_object_add(o, "signer", json_object_new_string(pubhex));
	json_object_object_add(o, "signature", json_object_new_string(sighex));
	ok = enpu_buf_addf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return ok == 0 ? 0 : enpu_fail(e, ENPU_E_NOMEM, NULL, NULL, "out of memory");
}

static srv_rentry_verdict refuse(enpu_err *e, srv_rentry_verdict v, const char *fmt, const char *arg)
{
	enpu_fail(e, ENPU_E_SERVER, NULL, NULL, fmt, arg);
	return v;
}

/* The string field name of o (any length), or NULL. */
static const char *field(json_object *o, const char *name)
{
	json_object *v;

	if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static srv_rentry_verdict check_doc(const srv_rkeys *k, json_object *o, const char *want_key,
				    srv_rentry *out, enpu_err *e)
{
	static const char *const names[] = {"format", "version", "key", "artifact_id", "manifest",
					    "signer", "signature"};
	const char *key, *id, *man, *signer, *sig;
	unsigned char pub[32], sigb[64];
	json_object *v;
	char msg[256];
	EVP_PKEY *p;
	EVP_MD_CTX *md;
	int i, trusted = 0, ok;

	if (!json_object_is_type(o, json_type_object))
		return refuse(e, SRV_RENTRY_BAD, "an entry is a JSON object%s", "");
	json_object_object_foreach(o, name, val) {
		int known = 0;
		(void)val;
		for (i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
			known |= !strcmp(name, names[i]);
		if (!known)
			return refuse(e, SRV_RENTRY_BAD, "unknown field '%.40s' in an entry", name);
	}
	if (!field(o, "format") || strcmp(field(o, "format"), ENTRY_FORMAT) ||
	    !json_object_object_get_ex(o, "version", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != ENTRY_VERSION)
		return refuse(e, SRV_RENTRY_BAD, "not an entry of format " ENTRY_FORMAT " version 1%s", "");
	key = field(o, "key");
	id = field(o, "artifact_id");
	man = field(o, "manifest");
	signer = field(o, "signer");
	sig = field(o, "signature");
	if (!key || !id || !man || !enpu_is_sha256_hex(key) || !enpu_is_sha256_hex(id) ||
	    !enpu_is_sha256_hex(man))
		return refuse(e, SRV_RENTRY_BAD, "an entry's key, artifact_id and manifest are "
			      "SHA-256 digests%s", "");
	if (!signer || !sig || hex_to(signer, pub, sizeof pub) || hex_to(sig, sigb, sizeof sigb))
		return refuse(e, SRV_RENTRY_BAD, "an entry's signer is 32 bytes and its signature 64, "
			      "in hex%s", "");
	for (i = 0; i < k->n_pub; i++)
		trusted |= !memcmp(k->pub[i], pub, sizeof pub);
	if (!trusted)
		return refuse(e, SRV_RENTRY_UNTRUSTED, "entry signed by an untrusted key %.16s", signer);
	memcpy(out->key, key, 65);
	memcpy(out->id, id, 65);
	memcpy(out->manifest, man, 65);
	signed_text(out, msg);
	p = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, sizeof pub);
	md = EVP_MD_CTX_new();
	ok = p && md && EVP_DigestVerifyInit(md, NULL, NULL, NULL, p) == 1 &&
	     EVP_DigestVerify(md, sigb, sizeof sigb, (const unsigned char *)msg, strlen(msg)) == 1;
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(p);
	if (!ok) {
		memset(out, 0, sizeof *out);
		return refuse(e, SRV_RENTRY_BADSIG, "entry's signature does not verify (signer %.16s)",
			      signer);
	}
	if (want_key && strcmp(want_key, key) != 0) {
		memset(out, 0, sizeof *out);
		return refuse(e, SRV_RENTRY_OTHER_KEY, "entry is signed for key %.16s, not the key "
			      "it was found under", key);
	}
	return SRV_RENTRY_OK;
}

srv_rentry_verdict srv_rentry_check(const srv_rkeys *k, const char *text, size_t len,
				    const char *want_key, srv_rentry *out, enpu_err *e)
{
	json_tokener *tok;
	json_object *o;
	srv_rentry_verdict v;

	memset(out, 0, sizeof *out);
	if (len > SRV_RENTRY_MAX)
		return refuse(e, SRV_RENTRY_BAD, "an entry of more than 4096 bytes%s", "");
	if (memchr(text, '\0', len))
		return refuse(e, SRV_RENTRY_BAD, "an entry with a NUL byte%s", "");
	tok = json_tokener_new_ex(4);
	if (!tok)
		return refuse(e, SRV_RENTRY_BAD, "out of memory%s", "");
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) < len) {
		/* trailing white space after the document is fine */
		int rest = 0;
		if (o && json_tokener_get_error(tok) == json_tokener_success) {
			for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
				rest |= !(text[i] == '\n' || text[i] == ' ' || text[i] == '\r' ||
					  text[i] == '\t');
		} else {
			rest = 1;
		}
		if (rest) {
			json_object_put(o);
			json_tokener_free(tok);
			return refuse(e, SRV_RENTRY_BAD, "an entry that is not one JSON document%s", "");
		}
	}
	json_tokener_free(tok);
	v = check_doc(k, o, want_key, out, e);
	json_object_put(o);
	return v;
}
