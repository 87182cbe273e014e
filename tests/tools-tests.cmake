# The command-line tools (tools/).
#
# test-bench-smoke  every htp-bench mode (model, matmul, membw, rtt) runs on a
#                   tiny problem and prints the JSON fields the README's tables
#                   come from; bad input (a missing model, -n 0) is refused.
#                   Nothing about speed is asserted.
add_test(NAME test-bench-smoke
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench-smoke.sh $<TARGET_FILE_DIR:htp-bench>
                 ${CMAKE_CURRENT_BINARY_DIR}/bench-smoke)
set_tests_properties(test-bench-smoke PROPERTIES TIMEOUT 120)
