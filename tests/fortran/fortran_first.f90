! The Fortran reader of fortran.reader_first, started before any writer:
! its get waits for the definition and the data of "late", which
! c_late_writer.c defines (with a fill value), partly puts and seals; the
! cells it left read as the fill value. Then the module's own fill value,
! seal and derive: a sealed version refuses puts, a derived one takes them.
! Exits 1 on any failed check.
program fortran_first
  use, intrinsic :: iso_fortran_env, only: int64, real64, output_unit
  use cove
  use values
  implicit none

  type(cove_client) :: client
  real(real64) :: late(5, 4), mine(3), back(3)
  integer(int64) :: shared
  logical :: already
  integer :: i, j

  call expect_status(cove_connect(client, timeout_ms=10000_int64), COVE_OK, "connect")
  ! c_late_writer puts rows 1..3 of the C array x[5][4], that is late(2:4, :).
  late = 0
  call expect_status(cove_get(client, "late", 1_int64, late, timeout_ms=60000_int64), COVE_OK, &
                     "get that waits for the definition and the data")
  do j = 1, 4
    do i = 1, 5
      if (i >= 2 .and. i <= 4) then
        call expect(late(i, j) == real(v2(i - 1, j - 1), real64), "a cell the writer put")
      else
        call expect(late(i, j) == -9.0_real64, "a cell no put covered reads as the fill value")
      end if
    end do
  end do

  call expect_status(cove_define(client, "mine", "f8", [3_int64], fill=transfer(-1.0_real64, repeat(' ', 8))), &
                     COVE_OK, "define with a fill value")
  call expect_status(cove_define(client, "odd", "f8", [3_int64], fill="abc"), COVE_INVALID_ARGUMENT, &
                     "a fill value of the wrong size", "fill value of 3 bytes")
  mine = [1, 2, 3]
  call expect_status(cove_put(client, "mine", 1_int64, mine(1:2)), COVE_OK, "put two of three")
  call expect_status(cove_seal(client, "mine", 1_int64, already), COVE_OK, "seal")
  call expect(.not. already, "not sealed before")
  call expect_status(cove_seal(client, "mine", 1_int64, already), COVE_OK, "seal again")
  call expect(already, "sealed already")
  call expect_status(cove_put(client, "mine", 1_int64, mine), COVE_INVALID_ARGUMENT, "put into a sealed version", &
                     "is sealed")
  call expect_status(cove_get(client, "mine", 1_int64, back), COVE_OK, "get of a sealed version")
  call expect(all(back == [1.0_real64, 2.0_real64, -1.0_real64]), "sealed version with its fill value")
  call expect_status(cove_derive(client, ["mine"], 1_int64, 2_int64, shared), COVE_OK, "derive")
  call expect(shared == 1, "one piece shared")
  call expect_status(cove_put(client, "mine", 2_int64, mine(3:3), [2_int64]), COVE_OK, "put into the derived version")
  call expect_status(cove_get(client, "mine", 2_int64, back, timeout_ms=5000_int64), COVE_OK, "get of the derived one")
  call expect(all(back == mine), "derived version with the new put")
  call expect_status(cove_derive(client, ["mine"], 1_int64, 2_int64), COVE_ALREADY_EXISTS, "derive onto a version there")

  call expect_status(cove_disconnect(client), COVE_OK, "disconnect")
  write (output_unit, '(a,i0,a)') "fortran first reader: ", failures, " failed"
  if (failures /= 0) stop 1
end program fortran_first
