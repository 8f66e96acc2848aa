# ctest ref_onnx_node_docs: the docs quote the count of the committed list of ONNX node tests
# expected to pass on ref (onnx_node_tests_pass.txt), so the count is the one ctest enforces.
#   cmake -DLIST=... -DREADME=... -DREPORT=... -P check_doc_counts.cmake
file(STRINGS "${LIST}" lines REGEX "^test_")
list(LENGTH lines n)
file(READ "${README}" readme)
file(READ "${REPORT}" report)
string(FIND "${readme}" "the ${n} ONNX node tests" in_readme)
string(FIND "${report}" "**ONNX node tests: ${n} pass (listed)" in_report)
if(in_readme EQUAL -1 OR in_report EQUAL -1)
  message(FATAL_ERROR "${LIST} lists ${n} tests; README.md must say 'the ${n} ONNX node tests' and "
                      "docs/ref_backend.md '**ONNX node tests: ${n} pass (listed)' (regenerate it with --markdown)")
endif()
message(STATUS "${n} listed ONNX node tests, quoted by README.md and docs/ref_backend.md")
