/* test_srv_remote.c: the remote cache's trust (server/cache/remote_sign.c):
 * Ed25519 keys from PEM, entries signed and checked, and every way an
 * entry is refused: not JSON, truncated, oversized, unknown or missing
 * fields, a signer not trusted, a signature that does not verify, an
 * entry for another key. Also the compile key and the configuration
 * file's list of trusted keys. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ec.h>
#include "srv.h"
#include "cas.h"
#include "remote.h"

/* A fresh key of type id (EVP_PKEY_ED25519, EVP_PKEY_EC) as PEM text:
 * the private key in priv, the public half in pub. */
static void make_key(int id, enpu_buf *priv, enpu_buf *pub)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(id, NULL);
	EVP_PKEY *k = NULL;
	BIO *b;
	char *p;
	long n;

	cr_assert(c && EVP_PKEY_keygen_init(c) == 1);
	if (id == EVP_PKEY_EC)
		cr_assert(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(c, NID_X9_62_prime256v1) == 1);
	cr_assert(EVP_PKEY_keygen(c, &k) == 1);
	b = BIO_new(BIO_s_mem());
	cr_assert(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1);
	n = BIO_get_mem_data(b, &p);
	cr_assert(enpu_buf_add(priv, p, (size_t)n) == 0);
	BIO_free(b);
	b = BIO_new(BIO_s_mem());
	cr_assert(PEM_write_bio_PUBKEY(b, k) == 1);
	n = BIO_get_mem_data(b, &p);
	cr_assert(enpu_buf_add(pub, p, (size_t)n) == 0);
	BIO_free(b);
	EVP_PKEY_free(k);
	EVP_PKEY_CTX_free(c);
}

static const srv_rentry EN = {
	"1111111111111111111111111111111111111111111111111111111111111111",
	"2222222222222222222222222222222222222222222222222222222222222222",
	"3333333333333333333333333333333333333333333333333333333333333333",
};

/* A signer (keys with a sign key) and a reader trusting its public half. */
static enpu_buf A_PRIV, A_PUB, B_PRIV, B_PUB;
static srv_rkeys signer, reader;

static void setup(void)
{
	enpu_err e = ENPU_ERR_INIT;

	memset(&signer, 0, sizeof signer);
	memset(&reader, 0, sizeof reader);
	make_key(EVP_PKEY_ED25519, &A_PRIV, &A_PUB);
	make_key(EVP_PKEY_ED25519, &B_PRIV, &B_PUB);
	cr_assert_eq(srv_rkeys_add_private(&signer, A_PRIV.data, A_PRIV.len, "a.key", &e), 0, "%s",
		     e.message);
	cr_assert_eq(srv_rkeys_add_public(&reader, A_PUB.data, A_PUB.len, "a.pub", &e), 0, "%s",
		     e.message);
}

static void teardown(void)
{
	srv_rkeys_free(&signer);
	srv_rkeys_free(&reader);
	enpu_buf_free(&A_PRIV);
	enpu_buf_free(&A_PUB);
	enpu_buf_free(&B_PRIV);
	enpu_buf_free(&B_PUB);
}

/* A signed entry for EN into doc (NUL-terminated). */
static void signed_doc(const srv_rkeys *k, enpu_buf *doc)
{
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(srv_rentry_make(k, &EN, doc, &e), 0, "%s", e.message);
	cr_assert(enpu_buf_add(doc, "", 1) == 0);
	doc->len--;
}

static srv_rentry_verdict check_text(const srv_rkeys *k, const char *t, const char *want)
{
	enpu_err e = ENPU_ERR_INIT;
	srv_rentry out;

	return srv_rentry_check(k, t, strlen(t), want, &out, &e);
}

TestSuite(srv_remote, .init = setup, .fini = teardown);

Test(srv_remote, signed_entry_verifies)
{
	enpu_buf doc = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	srv_rentry out;

	signed_doc(&signer, &doc);
	cr_assert_eq(srv_rentry_check(&reader, doc.data, doc.len, EN.key, &out, &e), SRV_RENTRY_OK,
		     "%s", e.message);
	cr_assert_str_eq(out.key, EN.key);
	cr_assert_str_eq(out.id, EN.id);
	cr_assert_str_eq(out.manifest, EN.manifest);
	/* the signer trusts its own key */
	cr_assert_eq(srv_rentry_check(&signer, doc.data, doc.len, NULL, &out, &e), SRV_RENTRY_OK);
	enpu_buf_free(&doc);
}

Test(srv_remote, untrusted_signer_is_refused)
{
	enpu_buf doc = ENPU_BUF_INIT;
	srv_rkeys other;
	enpu_err e = ENPU_ERR_INIT;

	memset(&other, 0, sizeof other);
	cr_assert_eq(srv_rkeys_add_private(&other, B_PRIV.data, B_PRIV.len, "b.key", &e), 0);
	signed_doc(&other, &doc);
	cr_assert_eq(check_text(&reader, doc.data, EN.key), SRV_RENTRY_UNTRUSTED);
	/* once B's public key is trusted too, it passes */
	cr_assert_eq(srv_rkeys_add_public(&reader, B_PUB.data, B_PUB.len, "b.pub", &e), 0);
	cr_assert_eq(check_text(&reader, doc.data, EN.key), SRV_RENTRY_OK);
	/* a reader trusting nothing takes nothing */
	srv_rkeys none;
	memset(&none, 0, sizeof none);
	cr_assert_eq(check_text(&none, doc.data, EN.key), SRV_RENTRY_UNTRUSTED);
	srv_rkeys_free(&other);
	enpu_buf_free(&doc);
}

/* doc with the first occurrence of from replaced by to (same length). */
static void patch(enpu_buf *doc, const char *from, const char *to)
{
	char *p = strstr(doc->data, from);

	cr_assert(p && strlen(from) == strlen(to));
	memcpy(p, to, strlen(to));
}

Test(srv_remote, wrong_signature_is_refused)
{
	enpu_buf doc = ENPU_BUF_INIT;
	char *sig;

	signed_doc(&signer, &doc);
	sig = strstr(doc.data, "\"signature\":\"");
	cr_assert(sig);
	sig += 13;
	*sig = *sig == '0' ? '1' : '0';
	cr_assert_eq(check_text(&reader, doc.data, EN.key), SRV_RENTRY_BADSIG);
	enpu_buf_free(&doc);
}

Test(srv_remote, changed_fields_break_the_signature)
{
	enpu_buf doc = ENPU_BUF_INIT;

	/* another artifact id under the same signature */
	signed_doc(&signer, &doc);
	patch(&doc, EN.id, "4444444444444444444444444444444444444444444444444444444444444444");
	cr_assert_eq(check_text(&reader, doc.data, NULL), SRV_RENTRY_BADSIG);
	enpu_buf_free(&doc);
	/* another manifest */
	signed_doc(&signer, &doc);
	patch(&doc, EN.manifest, "5555555555555555555555555555555555555555555555555555555555555555");
	cr_assert_eq(check_text(&reader, doc.data, NULL), SRV_RENTRY_BADSIG);
	enpu_buf_free(&doc);
	/* another key */
	signed_doc(&signer, &doc);
	patch(&doc, EN.key, "6666666666666666666666666666666666666666666666666666666666666666");
	cr_assert_eq(check_text(&reader, doc.data, NULL), SRV_RENTRY_BADSIG);
	enpu_buf_free(&doc);
}

Test(srv_remote, entry_for_another_key_is_refused)
{
	enpu_buf doc = ENPU_BUF_INIT;

	signed_doc(&signer, &doc);
	cr_assert_eq(check_text(&reader, doc.data,
				"7777777777777777777777777777777777777777777777777777777777777777"),
		     SRV_RENTRY_OTHER_KEY);
	enpu_buf_free(&doc);
}

Test(srv_remote, truncated_entries_are_refused)
{
	enpu_buf doc = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	srv_rentry out;

	signed_doc(&signer, &doc);
	for (size_t n = 0; n + 2 < doc.len; n++)   /* "\n" and "}" are the last two */
		cr_assert_eq(srv_rentry_check(&reader, doc.data, n, EN.key, &out, &e), SRV_RENTRY_BAD,
			     "a prefix of %zu bytes", n);
	enpu_buf_free(&doc);
}

Test(srv_remote, malformed_entries_are_refused)
{
	static const char *const bad[] = {
		"", "null", "[]", "\"x\"", "{", "{}", "not json",
		"{\"format\":\"eulernpu-remote-ac\"}",
		"{\"format\":\"other\",\"version\":1}",
		"{\"format\":\"eulernpu-remote-ac\",\"version\":2,\"key\":\"1\"}",
		"{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":1}}}}}",
	};
	enpu_buf doc = ENPU_BUF_INIT, big = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;
	srv_rentry out;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(check_text(&reader, bad[i], NULL), SRV_RENTRY_BAD, "%s", bad[i]);
	/* a valid document with an extra field, trailing garbage, a second document */
	signed_doc(&signer, &doc);
	cr_assert(enpu_buf_addf(&big, "{\"extra\":1,%s", doc.data + 1) == 0);
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%sx", doc.data) == 0);
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%s%s", doc.data, doc.data) == 0);
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	/* a NUL inside */
	cr_assert_eq(srv_rentry_check(&reader, doc.data, doc.len + 1, NULL, &out, &e), SRV_RENTRY_BAD);
	/* oversized: the document padded with spaces past 4096 bytes */
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%s", doc.data) == 0);
	while (big.len <= SRV_RENTRY_MAX)
		cr_assert(enpu_buf_add(&big, " ", 1) == 0);
	cr_assert_eq(srv_rentry_check(&reader, big.data, big.len, NULL, &out, &e), SRV_RENTRY_BAD);
	/* within the bound, the padding is fine */
	cr_assert_eq(srv_rentry_check(&reader, big.data, SRV_RENTRY_MAX, NULL, &out, &e), SRV_RENTRY_OK,
		     "%s", e.message);
	/* a signer or signature that is not hex, or of the wrong length */
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%s", doc.data) == 0);
	strstr(big.data, "\"signer\":\"")[10] = 'Z';
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%s", doc.data) == 0);
	strstr(big.data, "\"signature\":\"")[13] = 'A';   /* upper case is not our hex */
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%s", doc.data) == 0);
	{   /* a signer one digit short */
		char *q = strstr(big.data, "\"signer\":\"") + 10;
		memmove(q, q + 1, strlen(q + 1) + 1);
	}
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	/* a digest field that is not one */
	big.len = 0;
	cr_assert(enpu_buf_addf(&big, "%s", doc.data) == 0);
	patch(&big, EN.id, "222222222222222222222222222222222222222222222222222222222222222G");
	cr_assert_eq(check_text(&reader, big.data, NULL), SRV_RENTRY_BAD);
	enpu_buf_free(&doc);
	enpu_buf_free(&big);
}

Test(srv_remote, keys_that_are_not_ed25519_are_refused)
{
	enpu_buf ec_priv = ENPU_BUF_INIT, ec_pub = ENPU_BUF_INIT;
	srv_rkeys k;
	enpu_err e = ENPU_ERR_INIT;

	memset(&k, 0, sizeof k);
	make_key(EVP_PKEY_EC, &ec_priv, &ec_pub);
	cr_assert_eq(srv_rkeys_add_private(&k, ec_priv.data, ec_priv.len, "ec.key", &e), -1);
	cr_assert_eq(e.code, ENPU_E_CONFIG);
	cr_assert_eq(srv_rkeys_add_public(&k, ec_pub.data, ec_pub.len, "ec.pub", &e), -1);
	/* a public key is no private key, and the reverse */
	cr_assert_eq(srv_rkeys_add_private(&k, A_PUB.data, A_PUB.len, "a.pub", &e), -1);
	cr_assert_eq(srv_rkeys_add_public(&k, "garbage", 7, "g", &e), -1);
	cr_assert_eq(k.n_pub, 0);
	cr_assert_null(k.sign);
	/* a second sign key is refused; trusting one key twice keeps one */
	cr_assert_eq(srv_rkeys_add_private(&k, A_PRIV.data, A_PRIV.len, "a.key", &e), 0);
	cr_assert_eq(srv_rkeys_add_private(&k, B_PRIV.data, B_PRIV.len, "b.key", &e), -1);
	cr_assert_eq(srv_rkeys_add_public(&k, A_PUB.data, A_PUB.len, "a.pub", &e), 0);
	cr_assert_eq(k.n_pub, 1);
	srv_rkeys_free(&k);
	enpu_buf_free(&ec_priv);
	enpu_buf_free(&ec_pub);
}

Test(srv_remote, make_needs_a_sign_key)
{
	enpu_buf doc = ENPU_BUF_INIT;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(srv_rentry_make(&reader, &EN, &doc, &e), -1);
	enpu_buf_free(&doc);
}

Test(srv_remote, compile_key_hashes_every_input)
{
	char k0[65], k[65];

	cr_assert_eq(srv_ac_key("c1", "npu_sim", "{\"a\":1}", EN.key, EN.id, k0), 0);
	cr_assert_eq(srv_ac_key("c1", "npu_sim", "{\"a\":1}", EN.key, EN.id, k), 0);
	cr_assert_str_eq(k0, k);
	cr_assert_eq(srv_ac_key("c2", "npu_sim", "{\"a\":1}", EN.key, EN.id, k), 0);
	cr_assert_str_neq(k0, k);
	cr_assert_eq(srv_ac_key("c1", "cpu_ref", "{\"a\":1}", EN.key, EN.id, k), 0);
	cr_assert_str_neq(k0, k);
	cr_assert_eq(srv_ac_key("c1", "npu_sim", "{\"a\":2}", EN.key, EN.id, k), 0);
	cr_assert_str_neq(k0, k);
	cr_assert_eq(srv_ac_key("c1", "npu_sim", "{\"a\":1}", EN.id, EN.id, k), 0);
	cr_assert_str_neq(k0, k);
	cr_assert_eq(srv_ac_key("c1", "npu_sim", "{\"a\":1}", EN.key, EN.key, k), 0);
	cr_assert_str_neq(k0, k);
}

Test(srv_remote, config_lists_trusted_keys)
{
	static const char text[] = "remote-cache: http://127.0.0.1:1/\n"
				   "remote-cache-trust:\n  - /a.pub\n  - /b.pub\n";
	srv_cfg_file f;
	enpu_err e = ENPU_ERR_INIT;

	cr_assert_eq(srv_cfg_parse(text, strlen(text), "d.yaml", &f, &e), 0, "%s", e.message);
	cr_assert_eq(f.n, 3);
	cr_assert_str_eq(f.items[1].key, "remote-cache-trust");
	cr_assert_str_eq(f.items[1].value, "/a.pub");
	cr_assert_str_eq(f.items[2].value, "/b.pub");
	srv_cfg_free(&f);
	static const char bad[] = "remote-cache-trust:\n  - {a: 1}\n";
	cr_assert_eq(srv_cfg_parse(bad, strlen(bad), "d.yaml", &f, &e), -1);
	cr_assert_eq(e.code, ENPU_E_CONFIG);
	static const char map[] = "remote-cache: {a: 1}\n";
	cr_assert_eq(srv_cfg_parse(map, strlen(map), "d.yaml", &f, &e), -1);
}
