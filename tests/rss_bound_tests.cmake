# Included by ctest after the discovered tests (tests/CMakeLists.txt): the
# tests that assert a peak-memory bound, labelled rss_bound.
set_tests_properties(CliCompute.NoWeightsMultiHeadNeverHoldsLTimesL PROPERTIES LABELS "cli;rss_bound")
set_tests_properties(CliSparse.NoWeightsAtL16384StaysFarBelowLTimesL PROPERTIES LABELS "cli;rss_bound")
set_tests_properties(GgufCli.AQ4KFileOfTinyLlamaShapeRunsWithinItsSizePlus1GiB PROPERTIES LABELS "cli;rss_bound")
