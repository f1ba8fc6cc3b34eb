! The Fortran reader of fortran.c_to_fortran: gets what c_writer.c put and
! checks every element (a(i,j) is the writer's x[i-1][j-1]): whole fields,
! a region at an offset across two pieces, a strided section (the rows
! between must stay untouched), rank 4; a get that times out, errors with
! their messages, metadata. Exits 1 on any failed check.
program fortran_reader
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, output_unit
  use cove
  use values
  implicit none

  type(cove_client) :: client
  real(real64) :: c2(6, 4), cube(6, 4, 1)
  integer(int64) :: part(2, 3, 3), version, found, t0, t1, rate
  real(real32) :: rows(8, 9)
  integer(int32) :: c4(3, 2, 4, 3)
  character(:), allocatable :: text
  integer :: i, j, k, l
  logical :: same

  call expect_status(cove_connect(client, timeout_ms=10000_int64), COVE_OK, "connect")

  call expect_status(cove_get(client, "c2", 1_int64, c2, timeout_ms=5000_int64), COVE_OK, "get c2")
  do j = 1, 4
    do i = 1, 6
      call expect(c2(i, j) == v2(i - 1, j - 1) + 0.5_real64, "c2 element")
    end do
  end do

  ! c3(1:2, 2:4, 1:3) in 0-based global offsets: across both C pieces.
  part = -1
  call expect_status(cove_get(client, "c3", 1_int64, part, [1_int64, 2_int64, 1_int64], 5000_int64), COVE_OK, &
                     "get c3 region")
  do k = 1, 3
    do j = 1, 3
      do i = 1, 2
        call expect(part(i, j, k) == v3(i, j + 1, k), "c3 region element")
      end do
    end do
  end do

  ! Into the odd rows of rows; the even ones keep their -7.
  rows = -7
  call expect_status(cove_get(client, "c2f", 1_int64, rows(1:8:2, :), timeout_ms=5000_int64), COVE_OK, &
                     "get into a strided section")
  do j = 1, 9
    do i = 1, 8
      if (mod(i, 2) == 1) then
        call expect(rows(i, j) == real(v2((i - 1) / 2, j - 1), real32) + 0.5_real32, "c2f element")
      else
        call expect(rows(i, j) == -7, "row between the section's untouched")
      end if
    end do
  end do

  call expect_status(cove_get(client, "c4", 1_int64, c4, timeout_ms=5000_int64), COVE_OK, "get c4")
  do l = 1, 3
    do k = 1, 4
      do j = 1, 2
        do i = 1, 3
          call expect(c4(i, j, k, l) == v4(i - 1, j - 1, k - 1, l - 1), "c4 element")
        end do
      end do
    end do
  end do

  ! A version nobody puts: COVE_TIMEOUT after the timeout, not before.
  call system_clock(t0, rate)
  call expect_status(cove_get(client, "c2", 99_int64, c2, timeout_ms=300_int64), COVE_TIMEOUT, "get that times out")
  call system_clock(t1)
  call expect(real(t1 - t0) / real(rate) >= 0.25, "the get waited for its timeout")
  call expect(c2(6, 4) == v2(5, 3) + 0.5_real64, "a failed get left c2 alone")

  ! Errors: a status and a message.
  call expect_status(cove_get(client, "nowhere", 1_int64, c2, timeout_ms=0_int64), COVE_NOT_FOUND, "get of an undefined variable")
  call expect_status(cove_get(client, "c2", 1_int64, cube), COVE_INVALID_ARGUMENT, "get of 3-D from 2-D c2")
  call expect_status(cove_get(client, "c2", 1_int64, c2, [0_int64]), COVE_INVALID_ARGUMENT, &
                     "start of the wrong size", "start has 1 entries for 2 dimensions")
  call expect_status(cove_get(client, "c2", 1_int64, c2, [1_int64, 0_int64]), COVE_INVALID_ARGUMENT, &
                     "region beyond c2's shape", "outside the global shape")
  call expect_status(cove_get(client, "c2", -1_int64, c2), COVE_INVALID_ARGUMENT, "negative version", "negative")
  call expect(cove_strerror(COVE_TIMEOUT) == "timed out", "cove_strerror")
  call expect(cove_status_name(COVE_PERMISSION_DENIED) == "PERMISSION_DENIED", "cove_status_name")

  call expect_status(cove_latest(client, "c2", version), COVE_OK, "latest")
  call expect(version == 1, "latest version of c2")

  call expect_status(cove_get_meta(client, "cnote", 2_int64, text), COVE_OK, "get_meta exact")
  call expect(text == "written by C: c2 is 6 x 4" .and. len(text) == 25, "metadata text")
  call expect_status(cove_get_meta(client, "cnote", 0_int64, text, mode=COVE_META_LATEST, found_version=found), &
                     COVE_OK, "get_meta latest")
  call expect(found == 2 .and. text == "written by C: c2 is 6 x 4", "latest metadata")
  ! Longer than the first buffer: got whole.
  call expect_status(cove_get_meta(client, "clong", 5_int64, text), COVE_OK, "get_meta of 1000 bytes")
  same = len(text) == 1000
  do i = 1, len(text)
    same = same .and. text(i:i) == achar(iachar("a") + mod(i - 1, 26))
  end do
  call expect(same, "1000 bytes of metadata")
  call expect_status(cove_get_meta(client, "cnote", 7_int64, text, timeout_ms=100_int64), COVE_TIMEOUT, &
                     "get_meta that times out")
  call expect(text == "", "no text after a failed get_meta")

  call expect_status(cove_disconnect(client), COVE_OK, "disconnect")
  call expect_status(cove_disconnect(client), COVE_OK, "disconnecting twice does nothing")
  write (output_unit, '(a,i0,a)') "fortran reader: ", failures, " failed"
  if (failures /= 0) stop 1
end program fortran_reader
