# Backend tests: the op conformance suite, tests/test-ops.c.
#
# test-ops         every op case HTP0 claims, against ggml-cpu; exits 77 (skip)
#                  when no HTP device is available
# test-ops-cpu     the harness itself: a second CPU backend must match the first
#                  with zero error on a subset of the ops (views, permutes, all
#                  index types), so a harness bug cannot hide behind the device
# test-ops-inject  the harness reports failures: with --inject-error every case
#                  must fail, and the summary must say so
htp_test(test-ops LIBS ggml ggml-htp m TIMEOUT 600)

add_test(NAME test-ops-cpu COMMAND test-ops -b CPU -o MUL_MAT,CPY,GET_ROWS,SET_ROWS,RMS_NORM,ROPE,SWIGLU)
set_tests_properties(test-ops-cpu PROPERTIES TIMEOUT 120)

add_test(NAME test-ops-inject COMMAND test-ops -b CPU -o RMS_NORM,SET_ROWS --inject-error)
set_tests_properties(test-ops-inject PROPERTIES TIMEOUT 120
    PASS_REGULAR_EXPRESSION "\n0 passed, [1-9][0-9]* failed, 0 skipped")
