# Registers a GoogleTest executable's tests with CTest one process per suite
# (CMakeLists.txt's tessera_register_tests with TESSERA_TESTS_BY_SUITE),
# instead of one per test as gtest_discover_tests does. Run with `cmake -P`
# when CTest starts (from the file tessera_register_tests has CTest
# include); it lists the tests and writes OUT, which that file includes.
#
#   EXE         the test executable
#   OUT         the CTest file to write
#   EXCLUDE     a regular expression of full test names (Suite.Test, as
#               gtest_discover_tests names them) left out; empty: none
#   MAX_TESTS   a suite of more tests is split into gtest shards of at most
#               this many (GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX)
#   COST        added to each process's test count for CTest's COST: the
#               largest start first in a run without CTest's cost data
#   PROPERTIES  more test properties, written as given (`TIMEOUT 600 ...`)
#
# Each process runs `EXE --gtest_filter=Suite.*[-excluded:...]`; its CTest
# name is the suite's, with `[i/n]` for a shard.
cmake_minimum_required(VERSION 3.22)

execute_process(COMMAND "${EXE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${rc}):\n${errors}")
endif()

# gtest's listing: `Suite.` then `  Test` lines, each maybe followed by
# `  # GetParam() = ...` or `  # TypeParam = ...`.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "  #.*" "" line "${line}")
  if(line MATCHES "^([^ ].*)\\.$")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    set(kept_${suite} 0)
    set(left_${suite} "")
  elseif(line MATCHES "^  (.+)$")
    set(test "${suite}.${CMAKE_MATCH_1}")
    if(NOT EXCLUDE STREQUAL "" AND test MATCHES "${EXCLUDE}")
      list(APPEND left_${suite} "${test}")
    else()
      math(EXPR kept_${suite} "${kept_${suite}} + 1")
    endif()
  endif()
endforeach()

set(text "")
foreach(suite IN LISTS suites)
  set(count ${kept_${suite}})
  if(count EQUAL 0)
    continue()
  endif()
  set(filter "${suite}.*")
  if(left_${suite})
    list(JOIN left_${suite} ":" left)
    string(APPEND filter "-${left}")
  endif()
  math(EXPR shards "(${count} + ${MAX_TESTS} - 1) / ${MAX_TESTS}")
  math(EXPR cost "${COST} + ${count} / ${shards}")
  math(EXPR last "${shards} - 1")
  foreach(shard RANGE ${last})
    set(name "${suite}")
    set(env "")
    if(shards GREATER 1)
      math(EXPR number "${shard} + 1")
      string(APPEND name "[${number}/${shards}]")
      set(env " ENVIRONMENT [==[GTEST_TOTAL_SHARDS=${shards};GTEST_SHARD_INDEX=${shard}]==]")
    endif()
    string(APPEND text "add_test([==[${name}]==] [==[${EXE}]==] [==[--gtest_filter=${filter}]==])\n"
                       "set_tests_properties([==[${name}]==] PROPERTIES COST ${cost}${env} ${PROPERTIES})\n")
  endforeach()
endforeach()
file(WRITE "${OUT}" "${text}")
