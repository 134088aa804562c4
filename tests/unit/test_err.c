/* test_err.c: the error catalogue and the three-line rendering. */
#include <criterion/criterion.h>
#include <string.h>
#include "err.h"

Test(err, catalogue_ids_unique_and_well_formed)
{
	size_t n;
	const enpu_code_info *t = enpu_code_table(&n);

	cr_assert_eq(n, ENPU_E_CODE_COUNT - 1, "every enpu_code has exactly one entry");
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(strlen(t[i].id), 5, "%s", t[i].id);
		cr_assert_eq(t[i].id[0], 'E');
		cr_assert(t[i].title[0] >= 'a' && t[i].title[0] <= 'z', "lowercase title: %s", t[i].title);
		cr_assert(t[i].http_status >= 200 && t[i].http_status < 600);
		cr_assert(t[i].exit_code >= 1 && t[i].exit_code <= 3);
		cr_assert(t[i].fix[0] && t[i].explain[0]);
		for (size_t j = i + 1; j < n; j++) {
			cr_assert_neq(strcmp(t[i].id, t[j].id), 0, "duplicate id %s", t[i].id);
			cr_assert_neq(t[i].code, t[j].code);
		}
		cr_assert_eq(enpu_code_by_id(t[i].id), &t[i]);
		cr_assert_eq(enpu_code_info_of(t[i].code), &t[i]);
	}
	cr_assert_null(enpu_code_by_id("E9999"));
	cr_assert_null(enpu_code_by_id(NULL));
}

Test(err, seed_codes_have_their_titles)
{
	cr_assert_str_eq(enpu_code_info_of(ENPU_E_WEIGHT_SHAPE)->title, "weights tensor shape mismatch");
	cr_assert_str_eq(enpu_code_info_of(ENPU_E_WEIGHT_SHAPE)->id, "E0301");
	cr_assert_str_eq(enpu_code_info_of(ENPU_E_CMP_KEY)->title, "tensor keys differ");
	cr_assert_str_eq(enpu_code_info_of(ENPU_E_LOWERING)->title, "backend lowering missing for op");
	cr_assert_eq(enpu_code_info_of(ENPU_E_UNREACHABLE)->exit_code, 3);
	cr_assert_eq(enpu_code_info_of(ENPU_E_CMP_DIFF)->exit_code, 1);
	cr_assert_eq(enpu_code_info_of(ENPU_E_QUEUE_FULL)->http_status, 429);
	cr_assert_eq(enpu_code_info_of(ENPU_E_TOO_LARGE)->http_status, 413);
}

Test(err, renders_three_lines)
{
	enpu_err e = ENPU_ERR_INIT;
	char buf[2048];

	cr_assert_eq(enpu_fail(&e, ENPU_E_WEIGHT_SHAPE, NULL, NULL,
			       "op '%s' reads weight '%s': spec.yaml:9 declares [8, 16], weights.npz holds [16, 8]",
			       "fc1", "fc1.w"), -1);
	enpu_err_render(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf,
		"error[E0301]: weights tensor shape mismatch\n"
		"  op 'fc1' reads weight 'fc1.w': spec.yaml:9 declares [8, 16], weights.npz holds [16, 8]\n"
		"  fix: retrain the weights or correct the spec \xc2\xb7 See: eulernpu explain E0301\n");

	enpu_fail(&e, ENPU_E_REF, "spec.yaml:12:23", "read 'h'", "op 'fc2' reads unknown tensor 'h3'");
	enpu_err_render(&e, buf, sizeof(buf));
	cr_assert_str_eq(buf,
		"error[E0204]: reference to an unknown tensor\n"
		"  spec.yaml:12:23: op 'fc2' reads unknown tensor 'h3'\n"
		"  fix: read 'h' \xc2\xb7 See: eulernpu explain E0204\n");
}

Test(err, null_err_is_allowed_and_long_messages_truncate)
{
	enpu_err e = ENPU_ERR_INIT;
	char big[4000], buf[64];

	cr_assert_eq(enpu_fail(NULL, ENPU_E_IO, NULL, NULL, "x"), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	enpu_fail(&e, ENPU_E_IO, big, big, "%s", big);
	cr_assert_eq(strlen(e.message), sizeof(e.message) - 1);
	enpu_err_render(&e, buf, sizeof(buf));
	cr_assert_eq(strlen(buf), sizeof(buf) - 1);
}
