#pragma once
// The checkout's source directory and the binary under test, defined in a file CMake generates per
// test folder (tests/CMakeLists.txt). SCHEDLAB_SOURCE_DIR and SCHEDLAB_BINARY expand to these calls,
// so no object file carries an absolute path and ccache shares them between checkouts.
const char* schedlab_test_source_dir();
const char* schedlab_test_binary();
